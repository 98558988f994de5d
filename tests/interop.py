"""Code written by others that the tests use as evidence: the official OTLP JSON file exporter and
other GenAI instrumentations (the ``interop`` extra).

They pin recent SDK releases, so only the newest constraint set installs them. :func:`require` skips
a test when one is missing — except under ``OTEL_PROVENANCE_TEST_SET=newest`` (scripts/test.sh sets
it), where the conftest has already failed the session: a missing package there is a broken set-up,
not a reason to test less. A framework no test set can hold (:data:`ELSEWHERE`) skips in every set,
saying why and where it is tested instead.
"""

from __future__ import annotations

import importlib
import json
from types import ModuleType
from typing import Any

import pytest

MODULES = (
    "opentelemetry.exporter.otlp.json.file",
    "opentelemetry.util.genai.handler",
    "openinference.instrumentation",
    "opentelemetry.instrumentation.langchain",
    "mcp",
    "agents",
    "langchain.agents",
    "pydantic_ai",
    "openinference.instrumentation.openai_agents",
    "openinference.instrumentation.langchain",
    "smolagents",
    "openinference.instrumentation.smolagents",
    "logfire",
    "agent_framework",
    "opentelemetry.instrumentation.genai.langchain",  # the official GenAI instrumentation (#35)
)
TEST_SET_ENV = "OTEL_PROVENANCE_TEST_SET"
#: Frameworks no test set installs, each tested in a case of ``scripts/install_check.sh`` (its app's
#: environment, this package beside it): module -> (why not in the newest set, the case). Not in
#: :data:`MODULES`: their absence is the newest set's design, not a broken set-up.
ELSEWHERE = {
    "autogen_agentchat": (
        "every autogen-core release pins protobuf~=5.29, the newest set has protobuf 7",
        "autogen",
    ),
}


def optional(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def require(module: str) -> ModuleType:
    found = optional(module)
    if found is None:
        if module in ELSEWHERE:
            why, case = ELSEWHERE[module]
            where = (
                f"{why}: tested in its own environment, "
                f"INSTALL_CHECK_CASES={case} bash scripts/install_check.sh"
            )
        else:
            where = "pip install -e '.[test,interop]'; newest SDK only"
        pytest.skip(f"{module} is not installed ({where})", allow_module_level=True)
    return found


def missing() -> list[str]:
    return [m for m in MODULES if optional(m) is None]


class _OwnFileSpanExporter:
    """This package's writer behind the official exporter's constructor, for sets without it.

    Used only where the official package cannot be installed; the newest set proves the two write
    the same bytes (tests/instrument/test_export_official_bytes.py).
    """

    def __init__(self, path: Any = None, *, stream: Any = None) -> None:
        self._path, self._stream = path, stream

    def export(self, spans: Any) -> Any:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        from otel_provenance.otlp_encoding import json_line

        request = encode_spans(list(spans))
        if request.resource_spans:
            if self._stream is not None:
                self._stream.write(json_line(request))
            else:
                with open(self._path, "a", encoding="utf-8") as f:
                    f.write(json_line(request))
        return SpanExportResult.SUCCESS

    def shutdown(self, *args: Any, **kwargs: Any) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def FileSpanExporter(path: Any = None, *, stream: Any = None) -> Any:
    """The official ``FileSpanExporter`` when installed, else this package's equivalent writer."""
    official = optional("opentelemetry.exporter.otlp.json.file")
    if official is not None:
        if stream is not None:
            return official.FileSpanExporter(stream=stream)
        return official.FileSpanExporter(path)
    return _OwnFileSpanExporter(path, stream=stream)


def otlp_json_spans(spans: Any) -> bytes:
    """OTLP/JSON of ``spans`` by the official JSON encoder, or by this package's where it is absent."""
    official = optional("opentelemetry.exporter.otlp.json.common.trace_encoder")
    if official is not None:
        return json.dumps(official.encode_spans(spans).to_dict()).encode()
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    from otel_provenance.otlp_encoding import json_line

    return json_line(encode_spans(spans)).encode()


def otlp_json_logs(logs: Any) -> bytes:
    """OTLP/JSON of log records, as :func:`otlp_json_spans`."""
    official = optional("opentelemetry.exporter.otlp.json.common._log_encoder")
    if official is not None:
        return json.dumps(official.encode_logs(logs).to_dict()).encode()
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    from otel_provenance.otlp_encoding import json_line

    return json_line(encode_logs(logs)).encode()


def _has_current_logs_sdk() -> bool:
    from otel_provenance.instrument.base._sdkcompat import HAS_CURRENT_LOGS_SDK

    return HAS_CURRENT_LOGS_SDK


#: Marks a test that needs the logs SDK's current record shape (opentelemetry-sdk >= 1.39): the
#: logs processor refuses older SDKs with a ConfigurationError (tests/instrument/test_sdk_compat.py).
logs_sdk = pytest.mark.skipif(
    not _has_current_logs_sdk(), reason="logs processor needs opentelemetry-sdk >= 1.39"
)


def require_logs_sdk() -> None:
    """Module-level form of :data:`logs_sdk`, called before the module imports logs-SDK names."""
    if not _has_current_logs_sdk():
        pytest.skip("logs processor needs opentelemetry-sdk >= 1.39", allow_module_level=True)


def openinference_to_file(path: Any, service: str, *, genai: bool) -> tuple[Any, Any]:
    """A provider whose spans go through ``op.ProvenanceSpanProcessor`` into an OTLP JSON file at
    ``path``, and an OpenInference ``OITracer`` on it (GenAI conventions on or off)."""
    require("openinference.instrumentation")
    from openinference.instrumentation import OITracer, TraceConfig
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    import otel_provenance as op

    provider = TracerProvider()
    provider.add_span_processor(
        op.ProvenanceSpanProcessor(SimpleSpanProcessor(FileSpanExporter(path=str(path))))
    )
    return provider, OITracer(provider.get_tracer(service), config=TraceConfig(enable_genai_semconv=genai))
