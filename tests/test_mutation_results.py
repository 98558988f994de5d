"""scripts/mutation_scope.py save / restore: mutmut's results kept in git between checkouts.

A full mutation run outlasts one sitting and ``mutants/`` is not committed, so the results go into
scripts/mutation-results.txt and come back as mutmut's own .meta files. What must hold: a kept kill is
never lost by a later partial run, a function that changed loses its old results, and a survivor no
one has judged equivalent is run again (a new test may kill it) instead of being kept as a verdict.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mutation_scope.py"
SOURCE = "src/pkg/mod.py"


@pytest.fixture
def scope(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("mutation_scope_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    monkeypatch.setattr(module, "RESULTS", tmp_path / "scripts" / "mutation-results.txt")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / SOURCE).write_text("def f(): pass\n")
    return module


def write_meta(root: Path, codes: dict[str, int | None], hashes: dict[str, str]) -> Path:
    meta = root / "mutants" / (SOURCE + ".meta")
    meta.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "exit_code_by_key": codes,
        "hash_by_function_name": hashes,
        "type_check_error_by_key": {},
        "durations_by_key": {},
        "estimated_durations_by_key": {},
    }
    meta.write_text(json.dumps(data))
    return meta


def kept_lines(scope) -> list[str]:
    return [line for line in scope.RESULTS.read_text().splitlines() if not line.startswith("#")]


def test_save_keeps_every_mutant_by_function_with_its_hash(scope, tmp_path):
    codes = {"pkg.mod.x_f__mutmut_1": 1, "pkg.mod.x_f__mutmut_2": 0, "pkg.mod.x_f__mutmut_3": None}
    codes["pkg.mod.xǁCǁm__mutmut_1"] = 36
    write_meta(tmp_path, codes, {"x_f": "aaaa", "xǁCǁm": "bbbb"})

    assert "3 of 4 mutants have a result" in scope.save()

    assert kept_lines(scope) == [f"{SOURCE}\tx_f\taaaa\t1,0,-", f"{SOURCE}\txǁCǁm\tbbbb\t36"]


def test_a_later_partial_run_never_loses_a_kept_result(scope, tmp_path):
    write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": 1, "pkg.mod.x_f__mutmut_2": None}, {"x_f": "aaaa"})
    scope.save()
    write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": None, "pkg.mod.x_f__mutmut_2": 0}, {"x_f": "aaaa"})

    scope.save()

    assert kept_lines(scope) == [f"{SOURCE}\tx_f\taaaa\t1,0"]


def test_a_function_that_changed_loses_its_old_results(scope, tmp_path):
    write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": 1, "pkg.mod.x_f__mutmut_2": 1}, {"x_f": "aaaa"})
    scope.save()
    write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": None, "pkg.mod.x_f__mutmut_2": 0}, {"x_f": "cccc"})

    scope.save()

    assert kept_lines(scope) == [f"{SOURCE}\tx_f\tcccc\t-,0"]


def test_a_function_no_longer_mutated_is_dropped(scope, tmp_path):
    write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": 1, "pkg.mod.x_g__mutmut_1": 1}, {"x_f": "a", "x_g": "b"})
    scope.save()
    write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": None}, {"x_f": "a"})

    scope.save()

    assert kept_lines(scope) == [f"{SOURCE}\tx_f\ta\t1"]


def test_restore_runs_again_every_survivor_not_listed_as_equivalent(scope, tmp_path):
    scope.RESULTS.write_text(f"# kept\n{SOURCE}\tx_f\taaaa\t1,0,0,5,36,-\n")
    (tmp_path / "scripts" / "mutation-equivalent.txt").write_text("pkg.mod.x_f__mutmut_3 same behaviour\n")

    assert "1 source file(s); 2 survivor(s) to run again" in scope.restore()

    meta = json.loads((tmp_path / "mutants" / (SOURCE + ".meta")).read_text())
    assert meta["hash_by_function_name"] == {"x_f": "aaaa"}
    assert meta["exit_code_by_key"] == {
        "pkg.mod.x_f__mutmut_1": 1,  # killed: kept
        "pkg.mod.x_f__mutmut_2": None,  # survived, not judged equivalent: run again
        "pkg.mod.x_f__mutmut_3": 0,  # survived, listed as equivalent: kept
        "pkg.mod.x_f__mutmut_4": None,  # no tests: run again
        "pkg.mod.x_f__mutmut_5": 36,  # timeout: a detection, kept
        "pkg.mod.x_f__mutmut_6": None,
    }


def test_restore_never_overwrites_a_run_in_progress(scope, tmp_path):
    live = write_meta(tmp_path, {"pkg.mod.x_f__mutmut_1": None}, {"x_f": "aaaa"})
    before = live.read_text()
    scope.RESULTS.write_text(f"{SOURCE}\tx_f\taaaa\t1\n")

    scope.restore()

    assert live.read_text() == before


def test_a_package_init_keeps_the_package_name(scope, tmp_path):
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("def f(): pass\n")
    scope.RESULTS.write_text("src/pkg/__init__.py\tx_f\taaaa\t1\n")

    scope.restore()

    meta = json.loads((tmp_path / "mutants" / "src" / "pkg" / "__init__.py.meta").read_text())
    assert meta["exit_code_by_key"] == {"pkg.x_f__mutmut_1": 1}


def test_a_damaged_results_line_is_named_with_its_line_number(scope):
    scope.RESULTS.write_text(f"# kept\n{SOURCE}\tx_f\taaaa\n")

    with pytest.raises(SystemExit, match=r"mutation-results.txt:2: expected source, function, hash"):
        scope.restore()
