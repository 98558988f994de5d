"""The signature docs/provenance.md gives ``op.run`` is the function's own (#49: it once lacked
``contract`` and ``approver``): every parameter, its default, and which are keyword-only."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import otel_provenance as op

DOC = Path(__file__).resolve().parents[2] / "docs" / "provenance.md"


def test_the_documented_op_run_signature_is_the_real_one():
    heading = re.search(r"^## `op\.run\((.*)\)`$", DOC.read_text(), re.M)
    assert heading is not None, "docs/provenance.md has no `op.run(...)` heading"
    documented = ast.parse(f"def run({heading.group(1)}): pass").body[0].args
    names = [a.arg for a in documented.args]
    keyword_only = [a.arg for a in documented.kwonlyargs]
    defaults = {
        **dict(zip(names[len(names) - len(documented.defaults) :], documented.defaults, strict=True)),
        **{a.arg: d for a, d in zip(documented.kwonlyargs, documented.kw_defaults, strict=True)},
    }
    real = inspect.signature(op.run).parameters
    assert names == [n for n, p in real.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert sorted(keyword_only) == sorted(n for n, p in real.items() if p.kind is p.KEYWORD_ONLY)
    assert {n: ast.literal_eval(d) for n, d in defaults.items()} == {n: p.default for n, p in real.items()}
