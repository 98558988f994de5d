"""Each framework the tests drive has one environment: the newest test set (``interop.MODULES``, whose
absence there fails the session) or a case of ``scripts/install_check.sh`` (``interop.ELSEWHERE``,
whose tests skip in the test sets saying where they run). AutoGen is the second kind: every autogen-core
release pins ``protobuf~=5.29``, and the newest set is where protobuf 7 is tested."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import interop

ROOT = Path(__file__).resolve().parents[1]


def _pins(name: str) -> dict[str, str]:
    lines = (ROOT / "constraints" / name).read_text().splitlines()
    return dict(line.lower().split("==") for line in lines if line and not line.startswith("#"))


def test_a_framework_tested_elsewhere_is_not_required_of_the_newest_set() -> None:
    assert not set(interop.ELSEWHERE) & set(interop.MODULES)


def test_each_framework_tested_elsewhere_has_a_case_the_install_check_runs_by_default() -> None:
    script = (ROOT / "scripts" / "install_check.sh").read_text()
    default = re.search(r'CASES="\$\{INSTALL_CHECK_CASES:-([^}]*)\}"', script)
    assert default, "scripts/install_check.sh: no default INSTALL_CHECK_CASES"
    for module, (_, case) in interop.ELSEWHERE.items():
        assert case in default[1].split(), f"{module}: case {case!r} is not run by default"
        assert re.search(rf"^\s+{re.escape(case)}\)", script, re.M), f"{module}: no case {case!r}"


def test_a_missing_framework_tested_elsewhere_skips_saying_where() -> None:
    absent = [m for m in interop.ELSEWHERE if interop.optional(m) is None]
    if not absent:
        pytest.skip("every framework of interop.ELSEWHERE is installed here (its own environment)")
    for module in absent:
        with pytest.raises(pytest.skip.Exception) as skipped:
            interop.require(module)
        why, case = interop.ELSEWHERE[module]
        assert why in str(skipped.value) and f"INSTALL_CHECK_CASES={case} bash" in str(skipped.value)


def test_the_newest_set_tests_protobuf_7_and_autogen_has_its_own_pins() -> None:
    newest, autogen = _pins("newest.txt"), _pins("autogen.txt")
    assert int(newest["protobuf"].split(".")[0]) >= 7, newest["protobuf"]
    assert not [name for name in newest if name.startswith("autogen")]
    assert autogen["protobuf"].startswith("5.29.") and autogen["autogen-agentchat"] == "0.7.5"
