"""`group_runs` filters runs by the release read from the attribute it is given, not service.version."""

from __future__ import annotations

from pathlib import Path

from offline_helpers import Recorder, write_jsonl
from otel_provenance.offline.readers import read_spans
from otel_provenance.offline.runs import group_runs


def test_group_runs_keeps_the_runs_whose_release_attribute_names_the_release(tmp_path: Path) -> None:
    """Each run's service.version says one release and its app.release another: the filter follows
    the attribute it was given (``--release-attribute``), in both directions."""
    spans = []
    for version, release in (("v1", "r2"), ("v2", "r1")):
        rec = Recorder(version)
        with rec.span("invoke_agent", {"app.release": release}):
            pass
        spans += rec.spans()
    read = list(read_spans([write_jsonl(spans, tmp_path / "t.jsonl")]))
    by_attribute = group_runs(read, release="r2", key="app.release")
    assert [r.release for r in by_attribute] == ["v1"]  # .release is always service.version
    assert [r.release for r in group_runs(read, release="v1")] == ["v1"]
    assert group_runs(read, release="v1", key="app.release") == []
