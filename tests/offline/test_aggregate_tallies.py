"""``Aggregate``: adding results keeps what the aggregate already held, and refuses what it cannot tally.

The gate builds one aggregate per release (or per shard, merged later); these are the guards on that
pure data type that a caller combining results by hand relies on.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contract_runs import triage_run
from otel_provenance.offline.aggregate import Aggregate, RunFinding
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.contracts.outcomes import Witness
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.gate import check_release, decide

CONTRACT = """\
version: 1
name: triage
rules:
  - id: skipped_check
    type: required_spans
    select: {step: permissions.check}
"""
AT = "2026-01-31T12:00:00Z"


def _empty(contract) -> Aggregate:
    return Aggregate.empty(contract.digest, [r.id for r in contract.rules], "v1", AT)


def test_a_run_id_added_twice_is_refused():
    contract = parse_contract(CONTRACT)
    result = evaluate(triage_run("twice"), contract)
    with pytest.raises(ValueError) as info:
        _empty(contract).add_all([result, result])
    assert str(info.value) == "a run id occurs twice among the results"


def test_adding_results_keeps_the_steps_and_tool_spans_already_counted():
    contract = parse_contract(CONTRACT)
    counted = _empty(contract).with_steps_seen(["ticket.fetch"], 3)
    assert counted.with_steps_seen(["ticket.update"]).tool_spans == 3  # steps alone add no tool spans
    added = counted.add_all([evaluate(triage_run("one"), contract)])
    assert (added.steps_seen, added.tool_spans) == (("ticket.fetch",), 3)
    assert added.evaluated == 1


def test_results_of_another_contract_cannot_be_decided():
    contract = parse_contract(CONTRACT)
    other = parse_contract(CONTRACT.replace("name: triage", "name: other"))
    aggregate = check_release([triage_run("r1")], contract, "v1", AT)
    with pytest.raises(ValueError) as info:
        decide(aggregate, other)
    assert str(info.value) == "the results were produced with a different contract"


span_ids = st.one_of(
    st.text("0123456789abcdef", min_size=16, max_size=16),  # as every reader writes them
    st.text("0123456789abcdefABCDEF", min_size=16, max_size=16),
    st.text(max_size=20),
)
witnesses = st.lists(
    st.builds(
        Witness,
        st.text(max_size=4),
        st.lists(span_ids, max_size=5).map(tuple),
        st.just((("calls", 3), ("retries", 2))),
    ),
    max_size=3,
).map(tuple)


@given(witnesses, witnesses)
def test_a_finding_gives_back_the_witnesses_it_was_made_with(kept, other) -> None:
    """Findings keep their span ids packed (``RunFinding``); what is read back, compared, hashed and
    pickled (to and from the ``--jobs`` workers) is what was given, whatever the ids."""
    finding = RunFinding("r1", ("t",), "fail", "m", kept)
    assert finding.witnesses == kept
    assert all(type(i) is str for w in finding.witnesses for i in w.span_ids)
    again = pickle.loads(pickle.dumps(finding))
    assert again == finding and hash(again) == hash(finding) and again.witnesses == kept
    assert (RunFinding("r1", ("t",), "fail", "m", other) == finding) == (other == kept)
