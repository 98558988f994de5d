"""What leaves the process: the stripping lists and transforms, the safe fan-out to exporting
processors, the exporters (an OTLP JSON Lines file, OTLP), the logs-signal wrapper and the tool-call
metrics."""
