"""``FileSource``, the trace source every offline command reads files through (``cli/_traces.py``):
its release filter by the default attribute and by another one, a shard's ``keep`` filter on run
ids, and its report of what was read — the same on either path it takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_helpers import Recorder, write_proto
from otel_provenance.offline.engines.source import FileSource


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    """Run r1 of release v1 (colour blue) and run r2 of release v2 (colour green), one file."""
    spans = []
    for run, release, colour in (("r1", "v1", "blue"), ("r2", "v2", "green")):
        rec = Recorder(release)
        with (
            rec.span("invoke_agent a", {"agent.run.id": run, "app.colour": colour}) as root,
            rec.span("execute_tool t", parent=root),
        ):
            pass
        spans += rec.spans()
    return write_proto(spans, tmp_path / "t.binpb")


def run_ids(source: FileSource) -> list[str]:
    return [run.run_id for run in source.runs()]


def test_the_release_filter_reads_service_version_by_default(traces: Path) -> None:
    assert run_ids(FileSource([str(traces)])) == ["r1", "r2"]
    assert run_ids(FileSource([str(traces)], "v1")) == ["r1"]
    assert run_ids(FileSource([str(traces)], "v2")) == ["r2"]
    assert run_ids(FileSource([str(traces)], "v3")) == []


def test_the_release_filter_reads_another_attribute_when_told(traces: Path) -> None:
    assert run_ids(FileSource([str(traces)], "green", release_attribute="app.colour")) == ["r2"]
    assert run_ids(FileSource([str(traces)], "v2", release_attribute="app.colour")) == []
    assert run_ids(FileSource([str(traces)], None, release_attribute="app.colour")) == ["r1", "r2"]


@pytest.mark.parametrize("release_attribute", ["service.version", "app.colour"])
def test_keep_reads_only_the_runs_it_accepts(traces: Path, release_attribute: str) -> None:
    source = FileSource([str(traces)], keep=lambda key: key == "r2", release_attribute=release_attribute)
    assert run_ids(source) == ["r2"]
    assert source.report.spans == 2  # r1's spans were never converted


@pytest.mark.parametrize("release_attribute", ["service.version", "app.colour"])
def test_the_report_counts_what_was_read_on_either_path(traces: Path, release_attribute: str) -> None:
    seen = []
    source = FileSource(
        [str(traces)],
        progress=lambda label, done, total: seen.append(label),
        release_attribute=release_attribute,
    )
    assert len(run_ids(source)) == 2
    assert (source.report.files, source.report.spans) == (1, 4)
    assert seen and all(label.endswith(str(traces)) for label in seen)
