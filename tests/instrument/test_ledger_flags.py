"""Booleans are evidence only by field name (``dry_run=True`` matches a result's ``dry_run: true``), and
a flag observed that way names where it was observed: tool, span id and field path. A nested ``op.run``
sees the flags of the enclosing run, not the other way round.

Through ``@op.tool`` and ``op.run`` with the real SDK.
"""

from __future__ import annotations

from typing import Any

import otel_provenance as op
from instrument_helpers import Traced, argument_attributes


def tools(traced: Traced, result: Any = None):
    @op.tool(side_effect="read", tracer_provider=traced.provider)
    def read_config() -> Any:
        return result

    attrs = argument_attributes(traced)

    return read_config, attrs


def test_an_observed_flag_names_its_tool_span_and_field_path(traced):
    read_config, attrs = tools(traced, {"options": {"dry_run": True, "force": False}})
    with op.run():
        read_config()
        got = attrs(dry_run=True, force=False)
    span_id = format(traced.span("read_config").context.span_id, "016x")
    for name in ("dry_run", "force"):
        assert got[name]["kind"] == "observed"
        assert got[name]["source_tool"] == "read_config"
        assert got[name]["source_span_id"] == span_id
        assert got[name]["source_field"] == f"options.{name}"


def test_a_flag_is_evidence_only_for_the_value_and_field_name_observed(traced):
    read_config, attrs = tools(traced, {"options": {"dry_run": True}})
    with op.run():
        read_config()
        got = attrs(dry_run=False, force=True)
    assert got["dry_run"]["kind"] == "assumed"  # the other value
    assert got["force"]["kind"] == "assumed"  # another field


def test_a_top_level_flag_of_the_run_inputs_is_named_by_its_field(traced):
    _, attrs = tools(traced)
    with op.run(inputs={"dry_run": True}):
        got = attrs(dry_run=True)["dry_run"]
    assert (got["kind"], got["source_tool"], got["source_field"]) == ("observed", "input", "dry_run")


def test_a_nested_run_sees_the_flags_observed_by_the_enclosing_run(traced):
    read_config, attrs = tools(traced, {"settings": {"verbose": False}})
    with op.run(inputs={"dry_run": True}, run_id="outer"):
        read_config()
        with op.run(run_id="inner"):
            inner = attrs(dry_run=True, verbose=False, approve=True)
            other_value = attrs(dry_run=False)["dry_run"]
    assert (inner["dry_run"]["kind"], inner["dry_run"]["source_tool"]) == ("observed", "input")
    assert inner["dry_run"]["source_field"] == "dry_run"
    assert (inner["verbose"]["kind"], inner["verbose"]["source_field"]) == ("observed", "settings.verbose")
    assert inner["approve"]["kind"] == "assumed"  # observed by neither run
    assert other_value["kind"] == "assumed"  # the enclosing run saw dry_run True, not False


def test_flags_observed_inside_a_nested_run_do_not_count_in_the_enclosing_run(traced):
    read_config, attrs = tools(traced, {"approve": True})
    with op.run(run_id="outer"):
        with op.run(run_id="inner"):
            read_config()
            inside = attrs(approve=True)["approve"]
        outside = attrs(approve=True)["approve"]
    assert inside["kind"] == "observed"
    assert outside["kind"] == "assumed"


def test_a_structured_argument_of_flags_observed_in_an_enclosing_run_is_observed(traced):
    """Each leaf of a structure is matched by its own field name, through the parent ledger too."""
    read_config, attrs = tools(traced, {"mode": {"dry_run": True, "force": False}})
    with op.run(run_id="outer"):
        read_config()
        with op.run(run_id="inner"):
            got = attrs(mode={"dry_run": True, "force": False})["mode"]
    assert (got["kind"], got["projection"], got["source_field"]) == ("observed", "structure", "mode.dry_run")


def test_past_the_bound_the_oldest_half_of_the_flags_go_and_the_ledger_reports_full(traced):
    """Flags are bounded like entries: more than ``max_entries`` of them drop the oldest half."""
    flags = {f"flag_{n}": True for n in range(5)}
    read_config, attrs = tools(traced, flags)
    with op.run(ledger_max_entries=4):
        read_config()  # 5 flags > 4: the oldest 5 // 2 go
        got = attrs(**flags)
    kinds = {name: got[name]["kind"] for name in flags}
    assert kinds == {f"flag_{n}": "assumed" if n < 2 else "observed" for n in range(5)}
    assert traced.span("use").attributes["agent.ledger.full"] is True


def test_flags_within_the_bound_are_all_kept_and_the_ledger_is_not_full(traced):
    flags = {f"flag_{n}": False for n in range(4)}
    read_config, attrs = tools(traced, flags)
    with op.run(ledger_max_entries=4):
        read_config()
        got = attrs(**flags)
    assert {got[name]["kind"] for name in flags} == {"observed"}
    assert "agent.ledger.full" not in traced.span("use").attributes
