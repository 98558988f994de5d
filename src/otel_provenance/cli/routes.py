"""`otel-provenance routes list|approve --contract C`: review the route families of a contract."""

from __future__ import annotations

import argparse

from ..offline.contracts.dsl import load_contract
from ..offline.contracts.model import Contract
from ..offline.routes import approve_family, contract_families
from ._common import EXIT_ERROR, EXIT_PASS, IO, UsageError
from ._writefile import write_text

_EXIT_CODES = """exit codes:
  0  done
  1  error: usage, unreadable or invalid contract, unknown family id, file not writable"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("routes", help="review the route families of a contract")
    actions = p.add_subparsers(dest="routes_action", metavar="ACTION", parser_class=type(p))
    ls = actions.add_parser(
        "list",
        help="list route families and their status",
        description=(
            "List the contract's route families (its approved_routes rule): id, status\n"
            "(approved or pending), runs and fingerprints mined, example traces to review, and\n"
            "each family's steps and edges with their counts (a representative run's)."
        ),
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ls.add_argument("--contract", required=True, metavar="C", help="the contract YAML file")
    ls.set_defaults(handler=_list)
    ap = actions.add_parser(
        "approve",
        help="approve a pending route family (rewrites the contract file)",
        description=(
            "Mark route family FAMILY_ID approved in the contract file, rewriting it in place\n"
            "(its permissions kept); runs on an approved route pass the approved_routes rule.\n"
            "Approving an approved family changes nothing."
        ),
        epilog=_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--contract", required=True, metavar="C", help="the contract YAML file")
    ap.add_argument("family", metavar="FAMILY_ID", help="a family id from `routes list`")
    ap.set_defaults(handler=_approve)
    p.set_defaults(handler=_missing_action)


def _missing_action(args: argparse.Namespace, io: IO) -> int:
    raise UsageError("routes: choose an action: list or approve")


def print_families(contract: Contract, io: IO) -> None:
    families = contract_families(contract)
    for rule_id, family in families:
        examples = ", ".join(family.example_trace_ids) or "-"
        io.out(
            f"{family.id}  {family.status:<8}  {family.runs} run(s)  {len(family.fingerprints)} "
            f"fingerprint(s)  rule {rule_id}  e.g. {examples}"
        )
        # what the family does, so a pending one can be reviewed without opening the YAML
        steps = ", ".join(f"{step} ×{count}" for step, count in family.steps) or "-"
        io.out(f"    steps: {steps}")
        if family.edges:
            edges = (f"{a or '(start)'} → {b} ×{count}" for a, b, count in family.edges)
            io.out("    edges: " + ", ".join(edges))
        if family.prerequisites:  # each write after the checks all the family's runs made first (#49)
            after = (f"{w} after {', '.join(c) or '(no check)'}" for w, c in family.prerequisites)
            io.out("    writes: " + "; ".join(after))
    if not families:
        io.out("This contract has no approved_routes rule.")


def _list(args: argparse.Namespace, io: IO) -> int:
    print_families(load_contract(args.contract), io)
    return EXIT_PASS


def _approve(args: argparse.Namespace, io: IO) -> int:
    try:
        approval = approve_family(load_contract(args.contract), args.family)
    except KeyError:
        io.error(f"{args.contract}: no route family {args.family!r} (see `otel-provenance routes list`)")
        return EXIT_ERROR
    if approval.text is None:
        io.out(f"{args.family} is already approved; {args.contract} is unchanged.")
        return EXIT_PASS
    write_text(args.contract, approval.text)
    io.out(f"Approved {args.family} in {args.contract}.")
    if approval.changes:
        io.out("Re-derived from the approved families' step counts:")
        for change in approval.changes:
            io.out(f"  {change}")
    return EXIT_PASS
