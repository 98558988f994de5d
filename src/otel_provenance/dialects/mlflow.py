"""MLflow tracing: span and trace inputs and outputs, chat messages and tools."""

from __future__ import annotations

from .dialect import Dialect

DIALECT = Dialect(
    name="mlflow",
    content_keys=frozenset(
        {
            "mlflow.spanInputs",
            "mlflow.spanOutputs",
            "mlflow.chat.tools",
            "mlflow.chat.messages",
            "mlflow.traceInputs",
            "mlflow.traceOutputs",
            "mlflow.trace.intermediate_outputs",
        }
    ),
    scope_words=("mlflow",),
    key_prefixes=("mlflow.",),
)
