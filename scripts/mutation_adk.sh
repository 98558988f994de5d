#!/usr/bin/env bash
# Mutation testing of the Google ADK adapter (instrument/adapters/adk.py) where its tests can run.
#
#   bash scripts/mutation_adk.sh        writes out/mutation-adk/results.txt
#
# Its tests (tests/integration/test_framework_adk.py) need the real ADK, which bounds the OpenTelemetry
# SDK to <= 1.44, so they skip in the newest test set that scripts/mutation.sh runs in. This script makes
# a venv like scripts/install_check.sh's `adk` case (google-adk 2.13.0, then this package, then the test
# tools and the mutmut of constraints/newest.txt), copies the tree (tracked and new files) to
# out/mutation-adk/tree and runs mutmut there with [tool.mutmut] narrowed to the adapter and its two test
# modules: the rest of the suite is not for that venv, and the main config stays as it is.
#
# The plugin class is built once per process (adk.py caches it), and mutmut forks every mutant from a
# process that has built it already: under mutmut, no mutant of _plugin_class is ever active. So each
# survivor is then run again in a fresh process (MUTANT_UNDER_TEST), where the class is built with the
# mutant active; results.txt gives both verdicts. _plugin_class 1-4 (the message without ADK) are
# killed only where ADK is not installed: by scripts/mutation.sh's run (test_adk_plugin_without_adk.py).
set -euo pipefail
cd "$(dirname "$0")/.."
work=out/mutation-adk
venv="$work/venv"
mutmut_pin="$(grep -i '^mutmut==' constraints/newest.txt)"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "google-adk==2.13.0"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e .
  "$venv/bin/python" -m pip install -q --disable-pip-version-check pytest hypothesis "$mutmut_pin"
fi
python="$(cd "$venv/bin" && pwd)/python"
rm -rf "$work/tree"
mkdir -p "$work/tree"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
  if [ -e "$file" ]; then cp --parents "$file" "$work/tree"; fi  # not a file deleted from the work tree
done
cd "$work/tree"
work="$(cd .. && pwd)"
"$python" - <<'PY'
import re
from pathlib import Path

path = Path("pyproject.toml")
text = path.read_text()
section = re.search(r"^\[tool\.mutmut\]\n.*?(?=^\[)", text, flags=re.S | re.M)
narrowed, mutated = re.subn(
    r"^only_mutate = \[.*?^\]\n",
    'only_mutate = ["src/otel_provenance/instrument/adapters/adk.py"]\n',
    section.group(0),
    flags=re.S | re.M,
)
narrowed, selected = re.subn(
    r"^pytest_add_cli_args_test_selection = .*\n",
    'pytest_add_cli_args_test_selection = ["tests/integration/test_framework_adk.py", '
    '"tests/instrument/test_adk_plugin_without_adk.py"]\n',
    narrowed,
    flags=re.M,
)
if (mutated, selected) != (1, 1):
    raise SystemExit("mutation_adk: pyproject.toml's [tool.mutmut] has no only_mutate or test selection")
path.write_text(text[: section.start()] + narrowed + text[section.end() :])
PY
export HYPOTHESIS_PROFILE=ci
if ! "$python" -m mutmut run --max-children "${MUTATION_CHILDREN:-1}" > mutmut.log 2>&1; then
  tail -c 3000 mutmut.log; echo; echo "mutation_adk: mutmut failed (log: $work/tree/mutmut.log)"; exit 1
fi
"$python" -m mutmut results --all true > mutmut-results.txt
: > ../results.txt
while read -r line; do
  name="${line%%:*}"
  name="${name// /}"
  verdict="${line##*: }"
  if [ "$verdict" = survived ]; then
    fresh=0
    MUTANT_UNDER_TEST="$name" PYTHONPATH=mutants/src "$python" -m pytest -x -q -p no:cacheprovider \
      tests/integration/test_framework_adk.py tests/instrument/test_adk_plugin_without_adk.py \
      > /dev/null 2>&1 || fresh=$?
    [ "$fresh" -eq 0 ] && verdict="survived (also in a fresh process)" || verdict="killed in a fresh process"
  fi
  echo "$name: $verdict" >> ../results.txt
done < mutmut-results.txt
cut -d: -f2 ../results.txt | sort | uniq -c
echo "mutation_adk: $work/results.txt"
