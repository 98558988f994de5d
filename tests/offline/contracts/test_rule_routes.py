"""``approved_routes`` in detail: exact fingerprints, similarity at the threshold, the closest of
several families, pending families, incomplete runs, and contract errors — messages and witnesses."""

from __future__ import annotations

import pytest

from contract_runs import READ, triage_run
from otel_provenance.errors import ContractError
from otel_provenance.offline.contracts import parse_contract
from otel_provenance.offline.evaluate import evaluate
from otel_provenance.offline.fingerprint import edge_counts, fingerprint, step_counts
from otel_provenance.offline.model import Run


def _family(fid: str, run: Run, status: str = "approved") -> str:
    steps = "".join(f"\n          {k}: {n}" for k, n in sorted(step_counts(run).items()))
    edges = "".join(
        f"\n          - {{from: '{a}', to: '{b}', count: {n}}}"
        for (a, b), n in sorted(edge_counts(run).items())
    )
    return (
        f'\n      - id: {fid}\n        status: {status}\n        fingerprints: ["{fingerprint(run)}"]'
        f"\n        steps:{steps}\n        edges:{edges}"
    )


def _routes(similarity: str, *families: str) -> str:
    return (
        "version: 1\nname: t\nrules:\n  - id: r\n    type: approved_routes\n"
        f'    similarity: "{similarity}"\n    families:{"".join(families)}\n'
    )


def _rule(text: str, run: Run):
    (rule,) = evaluate(run, parse_contract(text)).rules
    return rule


USUAL = triage_run("usual")
SKIPPED = triage_run("skipped", skip_check=True)
FAR = triage_run("far", extra=[("a.step", READ), ("b.step", READ), ("c.step", READ)])


FP_SKIPPED = fingerprint(SKIPPED)


def test_a_known_fingerprint_passes_whatever_the_threshold():
    assert _rule(_routes("1", _family("usual", USUAL)), triage_run("again")).status.value == "pass"


def test_a_different_route_fails_below_the_threshold_naming_the_closest_family_and_both_fractions():
    rule = _rule(_routes("1", _family("usual", USUAL)), SKIPPED)
    assert rule.status.value == "fail"
    (finding,) = rule.findings
    assert finding.message == (
        "this run's route matches no approved family; the closest approved family, usual, is 5/6 similar "
        "and the contract requires 1."
    )
    observed = (("closest_family", "usual"), ("fingerprint", FP_SKIPPED), ("similarity", "10/12"))
    assert [(w.trace_id, w.span_ids, w.observed) for w in finding.witnesses] == [
        (SKIPPED.trace_ids[0], (), observed)
    ]


def test_similarity_exactly_at_the_threshold_passes():
    assert _rule(_routes("5/6", _family("usual", USUAL)), SKIPPED).status.value == "pass"
    rule = _rule(_routes("6/7", _family("usual", USUAL)), SKIPPED)
    assert rule.status.value == "fail"
    assert rule.findings[0].message.endswith("is 5/6 similar and the contract requires 6/7.")


def test_the_closest_of_several_approved_families_is_the_one_judged():
    text = _routes("9/10", _family("a-far", FAR), _family("b-usual", USUAL), _family("c-far", FAR))
    rule = _rule(text, SKIPPED)
    assert "the closest approved family, b-usual, is 5/6 similar" in rule.findings[0].message
    assert _rule(_routes("5/6", _family("a-far", FAR), _family("b-usual", USUAL)), SKIPPED).status.value == (
        "pass"
    )
    # equally close families: the first by id is named
    twins = _routes("1", _family("y-usual", USUAL), _family("x-usual", USUAL))
    assert "the closest approved family, x-usual, is 5/6" in _rule(twins, SKIPPED).findings[0].message


def test_a_route_of_a_pending_family_fails_and_names_it():
    text = _routes("1", _family("usual", USUAL), _family("skip", SKIPPED, "pending"))
    (finding,) = _rule(text, SKIPPED).findings
    assert finding.message == (
        "this run follows route family skip, which is pending approval; the closest approved family, "
        "usual, is 5/6 similar and the contract requires 1."
    )
    assert dict(finding.witnesses[0].observed)["pending_family"] == "skip"
    (alone,) = _rule(_routes("1", _family("skip", SKIPPED, "pending")), SKIPPED).findings
    assert alone.message == (
        "this run follows route family skip, which is pending approval; no family is approved and the "
        "contract requires 1."
    )
    assert alone.witnesses[0].observed == (("fingerprint", FP_SKIPPED), ("pending_family", "skip"))


def test_a_pending_family_the_run_does_not_follow_is_not_named():
    """Only a pending family holding the run's own fingerprint is "the route this run follows"."""
    text = _routes("1", _family("usual", USUAL), _family("far", FAR, "pending"))
    (finding,) = _rule(text, SKIPPED).findings
    assert finding.message.startswith("this run's route matches no approved family; ")
    assert "pending_family" not in dict(finding.witnesses[0].observed)


def test_an_incomplete_run_off_every_route_is_insufficient():
    lost = triage_run("lost", orphan=True)
    rule = _rule(_routes("1", _family("usual", USUAL)), lost)
    assert rule.status.value == "insufficient_evidence"
    (finding,) = rule.findings
    assert finding.message == "the run's route cannot be judged: the run is incomplete."
    assert finding.witnesses[0].observed == (("fingerprint", fingerprint(lost)),)


@pytest.mark.parametrize(
    ("similarity", "families", "message"),
    [
        ("3/2", ("usual",), "rules[0].similarity: similarity must be between 0 and 1, found 3/2"),
        ("1", ("usual", "other", "usual"), "rules[0].families: duplicate family id 'usual'"),
    ],
)
def test_an_impossible_threshold_or_a_repeated_family_is_refused(similarity, families, message):
    with pytest.raises(ContractError) as info:
        parse_contract(_routes(similarity, *(_family(f, USUAL) for f in families)))
    assert str(info.value).endswith(message)
    assert _rule(_routes("0", _family("usual", USUAL)), FAR).status.value == "pass"  # 0 is allowed


def test_each_contract_names_its_own_closest_family_for_a_route_judged_before():
    """A route's closest family is kept by fingerprint for the families of the contract in use: the
    same run judged by another contract, and by the first again, gets each contract's own answer."""
    near = parse_contract(_routes("1", _family("usual", USUAL)))
    far = parse_contract(_routes("1", _family("far", FAR)))
    for contract, closest in ((near, "usual"), (far, "far"), (near, "usual"), (far, "far")):
        for run in (SKIPPED, triage_run("skipped-again", skip_check=True)):  # one route, two runs
            (rule,) = evaluate(run, contract).rules
            assert rule.status.value == "fail"
            assert f"the closest approved family, {closest}, is" in rule.findings[0].message
