"""This package's own spans: ``@op.tool`` writes the GenAI conventions' keys (the ``genai`` row reads
them) and the provenance attributes; ``op.run`` marks every span of its run with ``agent.run.id``."""

from __future__ import annotations

from .. import semconv
from .dialect import Dialect

DIALECT = Dialect(
    name="otel_provenance",
    agent_marks=((semconv.RUN_ID, None),),  # op.run marks its run's spans: an agent run, whatever else
    scope_words=("otel_provenance",),
    key_prefixes=(semconv.ARG_PREFIX,),
)
