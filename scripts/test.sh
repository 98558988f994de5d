#!/usr/bin/env bash
# Install the package with its test extras into a venv, lint, and run the test suite.
#
#   bash scripts/test.sh [PYTEST ARGS...]                               # newest set, into .venv
#   OTEL_PROVENANCE_TEST_SET=oldest bash scripts/test.sh [PYTEST ARGS...] # oldest set, .venv-oldest
#
# Exact versions come from constraints/<set>.txt. The newest set also installs the interop extra
# (the official OTLP JSON file exporter and other instrumentations, which pin recent SDKs).
# VENV=DIR overrides the venv. pytest collecting no test (exit 5) is a failure here.
set -euo pipefail
cd "$(dirname "$0")/.."

test_set="${OTEL_PROVENANCE_TEST_SET:-newest}"
case "$test_set" in
  newest) extras="test,interop"; venv="${VENV:-.venv}" ;;
  oldest) extras="test"; venv="${VENV:-.venv-oldest}" ;;
  *) echo "OTEL_PROVENANCE_TEST_SET: expected newest or oldest, got '$test_set'" >&2; exit 1 ;;
esac

python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  -c "constraints/$test_set.txt" -e ".[$extras]"
"$venv/bin/ruff" check src tests examples benchmarks
"$venv/bin/ruff" format --check src tests examples benchmarks  # one layout: a diff shows what changed
"$venv/bin/lint-imports" --no-cache  # the house's layers (pyproject.toml [tool.importlinter])

export OTEL_PROVENANCE_TEST_SET="$test_set"
status=0
"$venv/bin/python" -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "scripts/test.sh: pytest collected no tests ($test_set set): failing" >&2
  exit 1
fi
exit "$status"
