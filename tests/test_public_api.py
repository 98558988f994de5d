"""The public API is exactly ``__all__``: adding or removing a name is a deliberate act."""

import otel_provenance as op

EXPECTED = {
    "Budget",
    "ConfigurationError",
    "ContractError",
    "InvalidEvidenceError",
    "OtelProvenanceError",
    "ProvenanceError",
    "ProvenanceLogRecordProcessor",
    "ProvenanceSpanProcessor",
    "QueryError",
    "TraceReadError",
    "__version__",
    "configure",
    "run",
    "tool",
    # what the docs teach beside them (#33: the docs import only public names)
    "JsonLinesMetricExporter",
    "JsonLinesSpanExporter",
    "StripOptions",
    "ToolPolicy",
    "configure_logs",
    "configure_metrics",
    "unsafe_log_processors",
    "otlp_metric_exporter",
    "provenance_session",
    "retry_attempt",
    "unsafe_processors",
    "use_meter_provider",
    # the guard (#34): what an approver is asked
    "ApprovalRequest",
    # argument-value policies (#34)
    "Input",
    "Policy",
    # framework adapters (#35): the one line that installs each
    "adk_plugin",
    # a framework that runs tools on threads of its own without the run's context (#47: AutoGen)
    "carry_context_into_threads",
    # the two set-up warnings, so an application or its tests can filter them or make them errors
    "ContentLeakWarning",
    "NoExportWarning",
}


def test_all_is_curated():
    assert set(op.__all__) == EXPECTED


def test_every_public_name_resolves():
    for name in op.__all__:
        assert getattr(op, name) is not None, name


def test_exception_tree_inherits_builtins():
    assert issubclass(op.ProvenanceError, PermissionError)
    assert issubclass(op.ProvenanceError, op.OtelProvenanceError)
    assert issubclass(op.TraceReadError, ValueError)
    assert issubclass(op.InvalidEvidenceError, op.TraceReadError)
    assert issubclass(op.ContractError, ValueError)
    assert issubclass(op.QueryError, ConnectionError)


def test_the_set_up_warnings_are_caught_by_their_public_names():
    """An application's tests can expect or filter the set-up warnings by their public names
    (``pytest.warns(op.ContentLeakWarning)``, ``filterwarnings = error::otel_provenance...``)."""
    import pytest
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    provider.add_span_processor(op.ProvenanceSpanProcessor(SimpleSpanProcessor(InMemorySpanExporter())))
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))  # beside it: raw spans
    with pytest.warns(op.ContentLeakWarning, match="SimpleSpanProcessor"):
        provider.get_tracer("app").start_span("x").end()
    assert issubclass(op.ContentLeakWarning, UserWarning) and issubclass(op.NoExportWarning, UserWarning)


def test_offline_half_does_not_import_the_sdk():
    import subprocess
    import sys

    code = (
        "import sys, otel_provenance.offline.model, otel_provenance.cli;"
        "bad=[m for m in sys.modules if m.startswith(('opentelemetry.sdk','otel_provenance.instrument'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_semantic_convention_strings_match_the_installed_package():
    """semconv.py writes the OTel names itself; where the installed package has a name, it agrees."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
    from opentelemetry.semconv.attributes import error_attributes, service_attributes

    from otel_provenance import semconv

    checked = 0
    for module in (gen_ai_attributes, error_attributes, service_attributes):
        for name in dir(semconv):
            if name.isupper() and hasattr(module, name):
                assert getattr(semconv, name) == getattr(module, name), name
                checked += 1
    assert checked >= 6  # gen_ai.operation.name, tool name/id/type/description, error.type, service.*
    values = gen_ai_attributes.GenAiOperationNameValues
    assert values.EXECUTE_TOOL.value == semconv.EXECUTE_TOOL
    assert values.INVOKE_AGENT.value == semconv.INVOKE_AGENT


def test_a_public_function_named_like_its_module_is_the_function_after_the_module_loaded() -> None:
    """``fingerprint`` and ``evaluate`` live in modules of the same name; importing those modules binds
    the name on the package, which must not turn the public function into the module."""
    import importlib
    import types

    importlib.import_module("otel_provenance.offline.fingerprint")
    importlib.import_module("otel_provenance.offline.evaluate")
    from otel_provenance.offline import evaluate, fingerprint

    assert not isinstance(fingerprint, types.ModuleType) and callable(fingerprint)
    assert not isinstance(evaluate, types.ModuleType) and callable(evaluate)
    assert fingerprint.__module__ == "otel_provenance.offline.fingerprint"
