"""Every argument gets its own six ``agent.arg.<name>.*`` keys, also for a name seen for the first time.

The keys per argument name are cached; the name here is new to the process (a fresh uuid), so the
cache cannot answer for it and the keys must be built from the name."""

from __future__ import annotations

import uuid

import otel_provenance as op
from instrument_helpers import Traced


def test_an_argument_name_never_seen_before_gets_the_same_keys_as_a_known_one():
    t = Traced()

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def list_files(root: str) -> dict:
        return {"files": ["app.py"]}

    @op.tool(side_effect="read", tracer_provider=t.provider)
    def read(**fields: str) -> None: ...

    fresh = f"field_{uuid.uuid4().hex}"
    with op.run(inputs={"root": "."}):
        list_files(root=".")
        read(path="app.py")
        read(**{fresh: "app.py"})
    known, new = (
        {k: v for k, v in t.span("read", i).attributes.items() if k.startswith("agent.arg.")} for i in (0, 1)
    )
    assert {k.replace(fresh, "path", 1): v for k, v in new.items()} == known
    kinds = {k for k in known if k.startswith("agent.arg.path.")}
    assert len(kinds) >= 4 and known["agent.arg.path.kind"] == "observed"
