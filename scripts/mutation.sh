#!/usr/bin/env bash
# Mutation testing of the safety and verdict core with mutmut ([tool.mutmut] in pyproject.toml lists
# the modules). Writes out/mutation/summary.md (score per module) and out/mutation/survivors.txt.
#
#   bash scripts/mutation.sh                         every listed module (the full run, before a release)
#   bash scripts/mutation.sh --resume                go on with a full run: keeps mutants/, or starts from
#                                                    the results kept in scripts/mutation-results.txt
#   bash scripts/mutation.sh --changed [BASE]        only listed modules that differ from BASE (default HEAD~1)
#   bash scripts/mutation.sh --sample N [SEED]       N mutants drawn at random (seeded) from every listed module
#   bash scripts/mutation.sh 'otel_provenance.instrument.call.budget*' …   mutmut name patterns
#
# mutmut runs each mutant against the tests that cover the mutated function, on every core
# (MUTATION_CHILDREN=N: on N).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/mutmut ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -c constraints/newest.txt -e ".[test,interop,quality]"
fi
mkdir -p out/mutation
children="${MUTATION_CHILDREN:-$(nproc)}"
patterns=()
sample=""
resume=""
case "${1:-}" in
  --resume)
    resume=1 ;;
  --changed)
    base="${2:-HEAD~1}"
    mapfile -t patterns < <(.venv/bin/python scripts/mutation_scope.py changed "$base")
    if [ "${#patterns[@]}" -eq 0 ]; then
      echo "mutation: no listed module changed since $base; nothing to mutate"
      exit 0
    fi ;;
  --sample)
    sample="${2:?--sample needs a number}"; seed="${3:-1}" ;;
  "") ;;
  *) patterns=("$@") ;;
esac
export HYPOTHESIS_PROFILE=ci  # the same examples for the stats run and every mutant
if [ -z "$resume" ]; then
  rm -rf mutants   # mutmut keeps results between runs; start from the current source every time
elif [ ! -d mutants ]; then
  .venv/bin/python scripts/mutation_scope.py restore   # a new checkout: the results kept in git
fi
if [ -n "$sample" ]; then
  # Generate every mutant without running one (an unmatchable pattern), then run a seeded sample.
  .venv/bin/mutmut run --max-children "$children" "no-such-mutant-generate-only" >/dev/null 2>&1 || true
  mapfile -t patterns < <(.venv/bin/python scripts/mutation_scope.py sample "$sample" "$seed")
fi
echo "mutation: mutating ${patterns[*]:-every listed module}"
: > out/mutation/run.log
# mutmut's timeout thread sends SIGXCPU to a child's PID at its deadline even after the child has ended;
# once PIDs wrap, that PID may be mutmut itself (exit 152 = 128 + SIGXCPU). It keeps its results, so go on.
for attempt in 1 2 3 4 5 6 7 8; do
  status=0
  .venv/bin/mutmut run --max-children "$children" "${patterns[@]}" >> out/mutation/run.log 2>&1 || status=$?
  [ "$status" -eq 152 ] || break
  echo "mutation: mutmut stopped by a stray SIGXCPU (attempt $attempt); going on where it stopped"
done
if [ -n "$resume" ]; then
  .venv/bin/python scripts/mutation_scope.py save   # also after a failure; commit the file to keep them
fi
if [ "$status" -ne 0 ]; then
  tail -40 out/mutation/run.log; echo "mutation: mutmut failed (log: out/mutation/run.log)"; exit 1
fi
.venv/bin/mutmut results --all true > out/mutation/results.txt
.venv/bin/python scripts/mutation_scope.py summary out/mutation/results.txt out/mutation "${patterns[@]}"
