"""Trace file formats are one table (``offline.readers.DECODERS``): a new one is a decoder and a row.

Done here: a made-up format — JSON Lines after a magic first line — is read by every command once its
decoder is in the table, and sniffed from its bytes like the built-in ones.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from contract_runs import export_runs, triage_run
from otel_provenance.cli import run as cli_run
from otel_provenance.offline.readers import DECODERS, Decoder, ReadReport, otlp_json, read_spans, sniff_format
from otel_provenance.offline.readers.tracefile import JSON_RAW, TraceFile, Unit

MAGIC = b"#otlp-jsonl v1\n"


def _magic_units(file: TraceFile, stream: IO[bytes], report: ReadReport | None, label: str) -> Iterator[Unit]:
    stream.readline()  # the magic line
    for line_no, raw in enumerate(stream, 2):
        if raw.strip():
            yield Unit(line_no, 0, JSON_RAW, raw, otlp_json.raw_signal(raw))


def test_a_new_format_is_one_decoder_and_one_row(tmp_path: Path, monkeypatch) -> None:
    plain = tmp_path / "plain.jsonl"
    export_runs([triage_run("a", "v1"), triage_run("b", "v1")], str(plain))
    magic = tmp_path / "traces.otlpl"
    magic.write_bytes(MAGIC + plain.read_bytes())
    assert sniff_format(magic) == "text"  # unknown: refused, as any text that is not OTLP
    monkeypatch.setitem(
        DECODERS,
        "magic-jsonl",
        Decoder("magic-jsonl", _magic_units, "lines", lambda head: head.startswith(MAGIC)),
    )
    assert sniff_format(magic) == "magic-jsonl"
    assert [s.span_id for s in read_spans([magic])] == [s.span_id for s in read_spans([plain])]
    out = io.StringIO()
    assert cli_run(["fingerprint", str(magic)], out, io.StringIO()) == 0
    expected = io.StringIO()
    cli_run(["fingerprint", str(plain)], expected, io.StringIO())
    assert out.getvalue() == expected.getvalue()


def test_every_built_in_format_has_a_row() -> None:
    assert set(DECODERS) >= {
        "otlp-json-lines",
        "otlp-json",
        "otlp-protobuf",
        "otlp-length-prefixed",
        "empty",
        "json-with-bom",
        "text",
    }
