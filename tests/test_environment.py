"""Every environment variable the package reads is one documented constant in ``otel_provenance.environment``,
read by one parser that treats unset, empty and blank alike and names the variable when a value is wrong."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from otel_provenance import environment
from otel_provenance.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "otel_provenance" / "environment.py"
OURS = re.compile(r"""["'](OTEL_PROVENANCE_[A-Z_]+|SIGNOZ_API_KEY)["']""")


def _constants() -> dict[str, str | None]:
    """Each constant of the module and the docstring that follows it."""
    body = ast.parse(SOURCE.read_text()).body
    out: dict[str, str | None] = {}
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id.isupper():
            doc = (
                after.value.value
                if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                else None
            )
            out[node.target.id] = doc
    return out


def test_every_variable_is_one_constant_with_a_docstring_and_documented() -> None:
    constants = {k: v for k, v in _constants().items() if not k.startswith("_")}
    assert constants and all(doc for doc in constants.values()), constants
    docs = "".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    for name in constants:
        assert getattr(environment, name) == name
        if name != "PYTEST_CURRENT_TEST":  # pytest's, read only to be loud under test
            assert name in docs, f"{name} is in no doc page"


def test_no_other_module_spells_a_variable_of_ours() -> None:
    for path in (ROOT / "src" / "otel_provenance").rglob("*.py"):
        if path != SOURCE:
            assert not OURS.search(path.read_text()), path


@pytest.mark.parametrize("blank", ["", "  ", "\t"])
def test_unset_empty_and_blank_are_the_same(blank: str) -> None:
    env = {"X": blank}
    assert environment.text("X", env) is None
    assert environment.names("X", env) == ()
    assert environment.flag("X", True, env) is True and environment.flag("X", False, env) is False
    assert environment.integer("X", env) is None and environment.number("X", env) is None


def test_values_parse_and_a_wrong_one_names_its_variable() -> None:
    env = {"F": " Yes ", "N": "a, ,b ,", "I": " 12 ", "R": "2.5", "BAD": "maybe"}
    assert environment.flag("F", False, env) is True
    assert environment.names("N", env) == ("a", "b")
    assert environment.integer("I", env) == 12 and environment.number("R", env) == 2.5
    for read in (lambda: environment.flag("BAD", True, env), lambda: environment.integer("BAD", env),
                 lambda: environment.number("BAD", env)):  # fmt: skip
        with pytest.raises(ConfigurationError, match=r"^BAD: expected"):
            read()
