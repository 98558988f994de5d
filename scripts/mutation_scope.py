"""Helpers for scripts/mutation.sh: which mutants to run, and the per-module summary.

    python scripts/mutation_scope.py changed BASE          patterns of listed modules changed since BASE
    python scripts/mutation_scope.py sample N SEED         N generated mutant names, drawn with a fixed seed
    python scripts/mutation_scope.py summary RESULTS OUTDIR [PATTERN ...]
    python scripts/mutation_scope.py renumber REV          re-key the equivalents after source changes
    python scripts/mutation_scope.py save                  keep the results in mutation-results.txt
    python scripts/mutation_scope.py restore               seed a new mutants/ with the kept results

The summary reads mutmut's own per-file records (``mutants/**/*.py.meta``: an exit code per mutant),
counts killed / survived / no tests / timeout per module, subtracts the survivors listed as
equivalent in ``scripts/mutation-equivalent.txt`` (name, then the reason), and writes
``summary.md`` and ``survivors.txt``. Exit status 0; the score is information, not a gate.

A full run takes longer than one sitting and ``mutants/`` is not committed, so ``save`` keeps every
mutant's exit code in ``scripts/mutation-results.txt`` (committed) beside the hash mutmut gives the
function it mutates, and ``restore`` writes them back as mutmut's own ``.meta`` files before a resumed
run. mutmut then keeps a result only while its function's hash is unchanged (its own incremental
rule) and runs the rest. Survivors not listed as equivalent go back to "not run" on ``restore``, so
each resumption judges them again with the tests written since.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import json
import random
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILLED = {1, 3, 37}  # a failing test, pytest's internal error, the type checker
TIMEOUT = {36, -24, 24, 152, 255}
NO_TESTS = {5, 33}


def listed_globs() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    return list(config["only_mutate"])


def module_of(path: str) -> str:
    """src/otel_provenance/offline/gate.py -> otel_provenance.offline.gate"""
    return path.removeprefix("src/").removesuffix(".py").replace("/", ".")


def changed(base: str) -> list[str]:
    diff = ["git", "diff", "--name-only", base, "--", "src"]
    out = subprocess.run(diff, cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    globs = listed_globs()
    return [f"{module_of(p)}.*" for p in sorted(out) if any(fnmatch.fnmatch(p, g) for g in globs)]


def records() -> dict[str, int | None]:
    """Every generated mutant's exit code (None: not run), from mutmut's .meta files."""
    codes: dict[str, int | None] = {}
    for meta in sorted((ROOT / "mutants" / "src").rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def sample(count: int, seed: int) -> list[str]:
    names = sorted(records())
    return sorted(random.Random(seed).sample(names, min(count, len(names))))


def equivalents() -> dict[str, str]:
    path = ROOT / "scripts" / "mutation-equivalent.txt"
    found = {}
    for line in path.read_text().splitlines() if path.exists() else ():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            found[name] = reason.strip()
    return found


def status(code: int | None) -> str:
    if code is None:
        return "not run"
    if code in KILLED:
        return "killed"
    if code in TIMEOUT:
        return "timeout"  # the mutant made the tests hang: detected
    if code in NO_TESTS:
        return "no tests"
    return "survived" if code == 0 else "suspicious"


def summary(outdir: Path, patterns: list[str]) -> str:
    equivalent = equivalents()
    per_module: dict[str, Counter[str]] = {}
    survivors = []
    not_run = 0
    for name, code in sorted(records().items()):
        if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        kind = status(code)
        module = name.split(".x", 1)[0]  # mutmut names: <module>.x_<function>__mutmut_<n>
        if kind == "not run":
            not_run += 1
            per_module.setdefault(module, Counter())[kind] += 1
            continue
        if kind in ("survived", "no tests", "suspicious") and name in equivalent:
            kind = "equivalent"
        per_module.setdefault(module, Counter())[kind] += 1
        if kind in ("survived", "no tests", "suspicious"):
            survivors.append(f"{name}\t{kind}")
    lines = [
        "| module | mutants run | killed | timeout | equivalent | survived | no tests | score | not run |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total: Counter[str] = Counter()
    for module, counts in sorted(per_module.items()):
        total.update(counts)
        lines.append(_row(module, counts))
    lines.append(_row("**all**", total))
    text = "\n".join(lines) + "\n"
    if not_run:
        text += f"\n{not_run} mutant(s) not run yet: `bash scripts/mutation.sh --resume` goes on\n"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "summary.md").write_text(text)
    (outdir / "survivors.txt").write_text("\n".join(survivors) + ("\n" if survivors else ""))
    return text + f"\n{len(survivors)} survivor(s) not listed as equivalent: {outdir / 'survivors.txt'}\n"


def _row(module: str, c: Counter[str]) -> str:
    detected = c["killed"] + c["timeout"]
    run = sum(c.values()) - c["not run"]
    judged = run - c["equivalent"]
    score = f"{100 * detected / judged:.1f} %" if judged else "–"
    name = module if module.startswith("**") else f"`{module.removeprefix('otel_provenance.')}`"
    return (
        f"| {name} | {run} | {c['killed']} | {c['timeout']} | {c['equivalent']} | "
        f"{c['survived'] + c['suspicious']} | {c['no tests']} | {score} | {c['not run']} |"
    )


def mutant_changes(path: str, code: str) -> dict[str, tuple[str, ...]]:
    """Each mutant of a module's functions (mutmut's name without the module) -> the lines it changes.

    A mutant is identified by the text it removes and adds, which survives edits elsewhere in its
    function, while its number (mutmut counts per function) does not."""
    from mutmut.mutation.file_mutation import mutate_file_contents

    mutated = mutate_file_contents(path, code).code
    lines = mutated.splitlines()  # sliced by line numbers: get_source_segment re-splits the file per call
    functions = {
        node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in ast.walk(ast.parse(mutated))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "__mutmut_" in node.name
    }
    changes = {}
    for name, text in functions.items():
        base, _, number = name.rpartition("__mutmut_")
        if number == "orig" or f"{base}__mutmut_orig" not in functions:
            continue
        original = functions[f"{base}__mutmut_orig"].splitlines()[1:]  # without the renamed def line
        diff = difflib.unified_diff(original, text.splitlines()[1:], lineterm="", n=0)
        changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        changes[name] = tuple(line.strip() for line in changed)
    return changes


def _mutants_of(changes: dict[str, tuple[str, ...]], base: str) -> dict[str, tuple[str, ...]]:
    return {name: change for name, change in changes.items() if name.rpartition("__mutmut_")[0] == base}


def renumber(rev: str) -> list[str]:
    """Re-key scripts/mutation-equivalent.txt for modules changed since ``rev``, the commit whose
    numbering the entries use (run it once per source change, with the commit before it): an entry
    whose mutant still exists (the same change to the same function) takes its new name; one that is
    gone is dropped and reported, to be judged again."""
    path = ROOT / "scripts" / "mutation-equivalent.txt"
    lines = path.read_text().splitlines()
    report, cache = [], {}
    out = []
    for line in lines:
        name, _, reason = line.partition(" ")
        module, _, local = name.partition(".x")
        source = "src/" + module.replace(".", "/") + ".py"
        if not (ROOT / source).exists():  # a package: its __init__
            source = source.removesuffix(".py") + "/__init__.py"
        if line.startswith("#") or not line.strip() or not (ROOT / source).exists():
            out.append(line)
            continue
        if source not in cache:
            show = ["git", "show", f"{rev}:{source}"]
            old = subprocess.run(show, cwd=ROOT, capture_output=True, text=True, check=True).stdout
            new = (ROOT / source).read_text()
            cache[source] = None if old == new else (mutant_changes(source, old), mutant_changes(source, new))
        if cache[source] is None:
            out.append(line)
            continue
        before, after = cache[source]
        change = before.get("x" + local)
        base = ("x" + local).rpartition("__mutmut_")[0]
        if _mutants_of(before, base) == _mutants_of(after, base):  # the function did not change
            out.append(line)
            continue
        match = [n for n, c in after.items() if c == change and n.rpartition("__mutmut_")[0] == base]
        if change is not None and len(match) == 1:
            out.append(f"{module}.{match[0]} {reason}")
            if match[0] != "x" + local:
                report.append(f"renumbered {name} -> {module}.{match[0]}")
        else:
            report.append(f"dropped {name}: no single mutant makes that change now; judge it again")
    path.write_text("\n".join(out) + "\n")
    return report


RESULTS = ROOT / "scripts" / "mutation-results.txt"
RESULTS_HEADER = """\
# mutmut's results, kept between checkouts: scripts/mutation_scope.py save / restore (docs/testing.md).
# One line per mutated function: source file, mutmut's function key, the hash mutmut gives the function
# (a result counts only while it is unchanged), then the exit code of each mutant by number (- = not run).
"""


def _meta_path(source: str) -> Path:
    return ROOT / "mutants" / (source + ".meta")


def _by_function(codes: dict[str, int | None]) -> dict[str, list[int | None]]:
    """{"pkg.mod.x_f__mutmut_2": 1, ...} -> {"x_f": [code of mutant 1, code of mutant 2, ...]}"""
    grouped: dict[str, dict[int, int | None]] = {}
    for name, code in codes.items():
        base, _, number = name.rpartition("__mutmut_")
        function = base.rpartition(".")[2]  # mutmut's key: x_f or xǁClassǁmethod
        grouped.setdefault(function, {})[int(number)] = code
    return {f: [n.get(i) for i in range(1, max(n) + 1)] for f, n in grouped.items()}


def read_results() -> dict[tuple[str, str], tuple[str, list[int | None]]]:
    """(source file, function key) -> (function hash, exit code by mutant number - 1)."""
    kept, path = {}, RESULTS
    for number, line in enumerate(path.read_text().splitlines() if path.exists() else (), 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            source, function, digest, codes = line.split("\t")
            kept[source, function] = (digest, [None if c == "-" else int(c) for c in codes.split(",")])
        except ValueError:
            problem = f"expected source, function, hash and codes: {line!r}"
            raise SystemExit(f"{path}:{number}: {problem}") from None
    return kept


def save() -> str:
    """Merge mutants/'s results into scripts/mutation-results.txt. A function mutmut hashes as before
    keeps its kept codes where this run has none; one that changed takes this run's codes (or none)."""
    kept = read_results()
    for meta in sorted((ROOT / "mutants" / "src").rglob("*.py.meta")):
        source = str(meta.relative_to(ROOT / "mutants")).removesuffix(".meta")
        data = json.loads(meta.read_text())
        hashes = data["hash_by_function_name"]
        for key in [k for k in kept if k[0] == source and k[1] not in hashes]:
            del kept[key]  # the function is gone, or no longer mutated
        for function, codes in _by_function(data["exit_code_by_key"]).items():
            old_digest, old_codes = kept.get((source, function), (None, []))
            if old_digest == hashes[function] and len(old_codes) == len(codes):
                codes = [new if new is not None else old for new, old in zip(codes, old_codes, strict=True)]
            kept[source, function] = (hashes[function], codes)
    lines = [
        f"{source}\t{function}\t{digest}\t" + ",".join("-" if c is None else str(c) for c in codes)
        for (source, function), (digest, codes) in sorted(kept.items())
    ]
    RESULTS.write_text(RESULTS_HEADER + "\n".join(lines) + "\n")
    every = [c for _, codes in kept.values() for c in codes]
    known = sum(c is not None for c in every)
    return f"{RESULTS.relative_to(ROOT)}: {known} of {len(every)} mutants have a result"


def restore() -> str:
    """Write the kept results as mutmut's .meta files, where mutants/ has none yet. A survivor, a
    mutant without tests or a suspicious one is "not run" again unless it is listed as equivalent."""
    equivalent = equivalents()
    per_source: dict[str, dict] = {}
    reset = 0
    for (source, function), (digest, codes) in read_results().items():
        module = module_of(source).removesuffix(".__init__")
        data = per_source.setdefault(source, {"exit_code_by_key": {}, "hash_by_function_name": {}})
        data["hash_by_function_name"][function] = digest
        for number, code in enumerate(codes, 1):
            name = f"{module}.{function}__mutmut_{number}"
            if code is not None and status(code) not in ("killed", "timeout") and name not in equivalent:
                code, reset = None, reset + 1
            data["exit_code_by_key"][name] = code
    written = 0
    for source, data in per_source.items():
        meta = _meta_path(source)
        if meta.exists() or not (ROOT / source).exists():
            continue
        meta.parent.mkdir(parents=True, exist_ok=True)
        extra = {"type_check_error_by_key": {}, "durations_by_key": {}, "estimated_durations_by_key": {}}
        meta.write_text(json.dumps(data | extra, indent=4))
        written += 1
    return f"restored the results of {written} source file(s); {reset} survivor(s) to run again"


def main(argv: list[str]) -> int:
    command, *rest = argv
    if command == "changed":
        print("\n".join(changed(rest[0])))
    elif command == "sample":
        print("\n".join(sample(int(rest[0]), int(rest[1]))))
    elif command == "renumber":
        print("\n".join(renumber(rest[0])))
    elif command == "save":
        print(save())
    elif command == "restore":
        print(restore())
    elif command == "summary":
        print(summary(Path(rest[1]), rest[2:]), end="")
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
