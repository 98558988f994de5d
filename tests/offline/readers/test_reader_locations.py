"""Trace files named by fsspec URLs and URL globs, read in this process (``readers.locations``).

fsspec's in-memory filesystem (``memory://``) stands in for object storage: the same code path as
``s3://`` without a network. Each test writes under its own root and removes it afterwards, since
that filesystem is shared by the whole process.
"""

from __future__ import annotations

import errno
import gzip
import sys
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from offline_helpers import Recorder, write_jsonl
from otel_provenance.errors import TraceReadError
from otel_provenance.offline.engines.source import FileSource
from otel_provenance.offline.readers import ReadReport, locations, read_spans


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[tuple[object, str]]:
    """(the memory filesystem, a root of this test's own)."""
    fs = fsspec.filesystem("memory")
    root = f"/otel-provenance-tests/{tmp_path.name}"
    yield fs, root
    if fs.exists(root):
        fs.rm(root, recursive=True)


def _trace_file(tmp_path: Path, name: str, runs: int) -> bytes:
    spans = []
    for n in range(runs):
        rec = Recorder("v1")
        with (
            rec.span("invoke_agent a", {"agent.run.id": f"{name}-{n}"}) as root,
            rec.span("execute_tool t", parent=root),
        ):
            pass
        spans += rec.spans()
    return write_jsonl(spans, tmp_path / f"{name}.jsonl").read_bytes()


def test_a_memory_url_reads_like_the_local_file_and_reports_its_size(tmp_path: Path, memory) -> None:
    fs, root = memory
    data = _trace_file(tmp_path, "a", 2)
    fs.pipe(f"{root}/a.jsonl", data)
    fs.pipe(f"{root}/a.jsonl.gz", gzip.compress(data))
    local = [s.span_id for s in read_spans([tmp_path / "a.jsonl"])]
    calls: list[tuple[str, int, int]] = []
    report = ReadReport(progress=lambda label, done, total: calls.append((label, done, total)))
    url = f"memory://{root}/a.jsonl"
    assert [s.span_id for s in read_spans([url], report=report)] == local
    assert calls[-1] == (f"reading {url}", len(data), len(data))  # sized through fsspec
    assert [s.span_id for s in read_spans([url + ".gz"])] == local


def test_a_file_url_reads_the_local_file(tmp_path: Path) -> None:
    _trace_file(tmp_path, "a", 1)
    path = tmp_path / "a.jsonl"
    assert [s.span_id for s in read_spans([path.as_uri()])] == [s.span_id for s in read_spans([path])]


def test_a_url_glob_names_its_files_sorted_and_skips_directories(tmp_path: Path, memory) -> None:
    fs, root = memory
    fs.pipe(f"{root}/b.jsonl", _trace_file(tmp_path, "b", 1))
    fs.pipe(f"{root}/a.jsonl", _trace_file(tmp_path, "a", 2))
    fs.mkdir(f"{root}/c.jsonl")  # a directory the pattern matches: not a file to read
    fs.pipe(f"{root}/c.jsonl/inner", b"not a trace")
    source = FileSource([f"memory://{root}/*.jsonl"])
    assert [run.run_id for run in source.runs()] == ["a-0", "a-1", "b-0"]  # a.jsonl first
    assert source.report.files == 2
    # a URL naming one file whose name holds glob characters is that file
    fs.pipe(f"{root}/x[1].jsonl", _trace_file(tmp_path, "x", 1))
    assert [run.run_id for run in FileSource([f"memory://{root}/x[1].jsonl"]).runs()] == ["x-0"]


def test_a_url_glob_matching_nothing_is_an_error(memory) -> None:
    _, root = memory
    pattern = f"memory://{root}/*.jsonl"
    with pytest.raises(TraceReadError, match="no file matches this pattern") as info:
        list(FileSource([pattern]).runs())
    assert info.value.source == pattern


def test_a_url_naming_a_directory_cannot_be_read(memory) -> None:
    fs, root = memory
    fs.pipe(f"{root}/d/t.jsonl", b"{}\n")
    url = f"memory://{root}/d"
    with pytest.raises(TraceReadError) as info:
        list(read_spans([url]))
    assert info.value.source == url and info.value.problem == "cannot read file (Is a directory)"
    with pytest.raises(IsADirectoryError) as error:  # as os.open would say it
        locations.size(url)
    assert error.value.errno == errno.EISDIR


def test_a_directory_url_is_its_files_below_it_hidden_ones_left_out(tmp_path: Path, memory) -> None:
    """A directory URL, as a local folder: every file below it, recursively and sorted, except hidden
    ones (an editor's, a tool's own). Only the part below the named directory counts as hidden: a
    directory that itself sits under a hidden folder (``.cache/``) is read, whether or not its URL
    ends with a slash, and whatever its name ends with."""
    fs, root = memory
    base = f"{root}/.cache/traces"
    fs.pipe(f"{base}/b.jsonl", _trace_file(tmp_path, "b", 1))
    fs.pipe(f"{base}/sub/a.jsonl", _trace_file(tmp_path, "a", 2))
    fs.pipe(f"{base}/.partial.jsonl", b"\x00 not a trace")
    fs.pipe(f"{base}/.tmp/c.jsonl", b"\x00 not a trace")
    for url in (f"memory://{base}", f"memory://{base}/"):
        assert locations.expand([url]) == [f"memory://{base}/b.jsonl", f"memory://{base}/sub/a.jsonl"]
        assert sorted(run.run_id for run in FileSource([url]).runs()) == ["a-0", "a-1", "b-0"]
    spaced = f"{root}/.cache/ends with a space "  # a name may end in white space: still the name
    fs.pipe(f"{spaced}/d.jsonl", _trace_file(tmp_path, "d", 1))
    assert locations.expand([f"memory://{spaced}"]) == [f"memory://{spaced}/d.jsonl"]
    fs.mkdir(f"{root}/only-hidden")
    fs.pipe(f"{root}/only-hidden/.x.jsonl", b"{}\n")
    with pytest.raises(TraceReadError) as info:
        locations.expand([f"memory://{root}/only-hidden"])
    assert info.value.problem == "a directory with no file in it"


def test_an_empty_file_at_a_url_has_size_zero(memory) -> None:
    fs, root = memory
    fs.pipe(f"{root}/empty.jsonl", b"")
    assert locations.size(f"memory://{root}/empty.jsonl") == 0


def test_local_inputs_are_expanded_in_the_order_given_each_glob_sorted(tmp_path: Path, memory) -> None:
    """Plain paths pass through (a missing one is reported when read, not as a pattern); a glob names
    its files sorted, never a directory; a file whose very name holds glob characters is that file;
    a URL naming one file is that file, and the inputs after it are still expanded."""
    fs, root = memory
    for name in ("b", "a", "c"):
        (tmp_path / f"{name}.jsonl").write_text("{}\n")
    (tmp_path / "d.jsonl").mkdir()
    (tmp_path / "x[1].jsonl").write_text("{}\n")
    fs.pipe(f"{root}/u[1].jsonl", b"{}\n")
    url = f"memory://{root}/u[1].jsonl"  # a URL with glob characters naming one file
    plain, pattern, odd = str(tmp_path / "c.jsonl"), str(tmp_path / "?.jsonl"), str(tmp_path / "x[1].jsonl")
    missing = str(tmp_path / "missing.jsonl")
    assert locations.expand([plain, url, pattern, odd, missing]) == [
        plain,
        url,
        *(str(tmp_path / f"{name}.jsonl") for name in ("a", "b", "c")),
        odd,
        missing,
    ]
    with pytest.raises(TraceReadError) as info:
        list(FileSource([missing]).runs())
    assert info.value.source == missing and info.value.problem.startswith("cannot read file")


def test_a_glob_matching_nothing_is_an_error_saying_so(tmp_path: Path) -> None:
    pattern = str(tmp_path / "*.jsonl")
    (tmp_path / "dir.jsonl").mkdir()  # matches, but is no file
    with pytest.raises(TraceReadError) as info:
        locations.expand([pattern])
    assert (info.value.source, info.value.problem) == (pattern, "no file matches this pattern")


class _Denied(MemoryFileSystem):
    """Object storage that refuses to list (as a bucket without list permission does)."""

    protocol = "otelprovenance-denied"

    def isfile(self, path):
        raise PermissionError(13, "Permission denied")


def test_a_url_glob_that_cannot_be_listed_is_an_error_naming_why() -> None:
    fsspec.register_implementation(_Denied.protocol, _Denied, clobber=True)
    pattern = f"{_Denied.protocol}://bucket/*.jsonl"
    with pytest.raises(TraceReadError) as info:
        locations.expand([pattern])
    assert info.value.source == pattern
    assert info.value.problem == "cannot list files (PermissionError: [Errno 13] Permission denied)"


def test_a_url_of_an_unknown_scheme_is_an_error_naming_it() -> None:
    url = "nosuchscheme://bucket/t.jsonl"
    with pytest.raises(TraceReadError, match=r"cannot open this URL \(.*nosuchscheme") as info:
        list(read_spans([url]))
    assert info.value.source == url
    with pytest.raises(TraceReadError, match="cannot open this URL") as info:
        list(FileSource(["nosuchscheme://bucket/*.jsonl"]).runs())
    assert info.value.source == "nosuchscheme://bucket/*.jsonl"


def test_a_url_without_fsspec_names_the_extra_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "fsspec", None)  # `import fsspec` raises ImportError
    url = "s3://bucket/t.jsonl"
    with pytest.raises(TraceReadError) as info:
        list(read_spans([url]))
    assert info.value.source == url
    assert "reading a URL needs fsspec: pip install 'otel-provenance[dask]'" in str(info.value)
    _trace_file(tmp_path, "a", 1)  # a plain path never needs fsspec
    assert len(list(read_spans([tmp_path / "a.jsonl"]))) == 2


def test_progress_while_a_long_file_is_read_from_a_url(memory) -> None:
    fs, root = memory
    span = (
        '{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "%016x", "name": "s", "kind": 1, '
        '"startTimeUnixNano": "1", "endTimeUnixNano": "2"}'
    )
    request = '{"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [%s]}]}]}\n'
    data = "".join(request % (span % n) for n in range(1, 4100)).encode()
    fs.pipe(f"{root}/long.jsonl", data)
    calls: list[tuple[int, int]] = []
    report = ReadReport(progress=lambda label, done, total: calls.append((done, total)))
    assert len(list(read_spans([f"memory://{root}/long.jsonl"], report=report))) == 4099
    assert len(calls) == 3 and all(total == len(data) and 0 < done <= len(data) for done, total in calls)
