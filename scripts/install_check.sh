#!/usr/bin/env bash
# Install otel-provenance into an application's existing environment, as a user would, and prove it
# leaves the application's OpenTelemetry alone. For each case:
#   1. a fresh venv gets the application first;
#   2. otel-provenance is installed into it — with the app's pins repeated on the command line (as
#      with the app's requirements file), or as a bare `pip install .` (pip does not weigh what the
#      installed app requires, so this is the case that moved an app's SDK before #35);
#   3. every package installed in step 1 keeps its version, and `pip check` is clean;
#   4. the base install brings no YAML library, HTTP client or template engine, and the CLI names its
#      extra; without an OTLP exporter, op.configure(exporter="otlp") names the extra that installs it;
#   5. an instrumented run works there: one trace per op.run, written to an OTLP JSON Lines file;
#   6. (a framework app) the framework's own test drives it there with a stub model: pytest and
#      Hypothesis are added without moving any installed version (pip freeze compared, pip check),
#      then FRAMEWORK_TESTS run (they cannot run in the newest test set: ADK bounds the SDK <= 1.44).
# Cases (APP_PINS overrides the first one's pins):
#   pinned  — the oldest supported SDK, the instrumentation released with it and the library it
#             instruments, pins repeated;
#   bare    — the same app, pins NOT repeated: `pip install .` alone;
#   adk     — Google ADK 2.13.0 (requires opentelemetry-api/sdk <= 1.44), pins NOT repeated; then
#             tests/integration/test_framework_adk.py there;
#   adk-otlp — the same ADK app, the base install, then the OTLP exporter with the command
#             op.ConfigurationError prints (`pip install 'otel-provenance[otlp]' 'opentelemetry-api==V'
#             'opentelemetry-sdk==V'`, the app's installed versions; #48: the bare extra moved ADK's SDK
#             1.44 -> 1.45.2), run as printed but for the project's own requirement, taken from this
#             checkout: nothing moves, pip check clean, and op.configure(exporter="otlp") then works;
#   strands — Strands Agents 1.62.0 (requires mcp < 2.2: the newest test set has mcp 2.3, where pip
#             can only pick strands-agents 0.0.1, an empty placeholder), pins NOT repeated; then
#             tests/integration/test_framework_strands.py there;
#   autogen — Microsoft AutoGen AgentChat 0.7.5 with the SDK, every version from constraints/autogen.txt
#             (every autogen-core release pins protobuf~=5.29: the newest set has protobuf 7), the
#             constraints repeated; then, the test tools under the same constraints (with the cli extra
#             and the official OTLP JSON file exporter, which write and read the producers' traces),
#             tests/integration/test_framework_autogen.py and the AutoGen producers of
#             tests/integration/test_agent_frameworks_gate.py there.
# INSTALL_CHECK_CASES="pinned bare adk adk-otlp strands autogen" (the default) chooses among them.
set -euo pipefail
cd "$(dirname "$0")/.."
APP_PINS="${APP_PINS:-opentelemetry-sdk==1.33.0 opentelemetry-instrumentation-requests==0.54b0 requests==2.32.3}"
CASES="${INSTALL_CHECK_CASES:-pinned bare adk adk-otlp strands autogen}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pip_q=(-q --disable-pip-version-check)

# run_framework_tests NAME VENV TEST...: the framework's tests in the app's own environment;
# TEST_TOOLS (pip arguments; default "pytest hypothesis") is what they need added
run_framework_tests() {
  local name="$1" venv="$2"
  shift 2
  local -a tools
  read -r -a tools <<<"${TEST_TOOLS:-pytest hypothesis}"
  "$venv/bin/python" -m pip freeze --all | sort >"$work/$name.app.txt"
  "$venv/bin/python" -m pip install "${pip_q[@]}" "${tools[@]}"
  "$venv/bin/python" -m pip freeze --all | sort >"$work/$name.tests.txt"
  local moved
  moved="$(comm -23 "$work/$name.app.txt" "$work/$name.tests.txt")"
  if [ -n "$moved" ]; then
    echo "install_check[$name]: installing the test tools moved the application's packages:" >&2
    echo "$moved" | sed 's/^/  was: /' >&2
    exit 1
  fi
  "$venv/bin/python" -m pip check
  # the tree's tests against the installed package (not the tree's src/): PYTHONPATH has tests/ only.
  # They are here to run: a skip (a module whose framework did not import skips whole, exit 0) fails.
  (cd tests && PYTHONPATH=. "$venv/bin/python" -m pytest -rs -p no:cacheprovider "$@") | tee "$work/$name.pytest.txt"
  if grep -qE '[0-9]+ skipped' "$work/$name.pytest.txt"; then
    echo "install_check[$name]: tests skipped in the app's environment, where they are meant to run (above)" >&2
    exit 1
  fi
  echo "install_check[$name]: $* passed in the app's environment (${tools[*]} added, nothing moved)"
}

# install_app NAME PACKAGE...: a fresh venv $work/NAME with the application, and what it holds
install_app() {
  local name="$1"
  shift
  python3 -m venv "$work/$name"
  "$work/$name/bin/python" -m pip install "${pip_q[@]}" "$@"
  "$work/$name/bin/python" -m pip freeze --all | sort >"$work/$name.before.txt"
}

# nothing_moved NAME WHAT: every package install_app left is still there at its version; pip check clean
nothing_moved() {
  local name="$1" what="$2" changed
  "$work/$name/bin/python" -m pip freeze --all | sort >"$work/$name.after.txt"
  changed="$(comm -23 "$work/$name.before.txt" "$work/$name.after.txt")"
  if [ -n "$changed" ]; then
    echo "install_check[$name]: $what changed the application's packages:" >&2
    echo "$changed" | sed 's/^/  was: /' >&2
    comm -13 "$work/$name.before.txt" "$work/$name.after.txt" | sed 's/^/  now: /' >&2
    exit 1
  fi
  "$work/$name/bin/python" -m pip check
}

# check_case NAME "APP PINS" repeat|bare APP_MODULE [FRAMEWORK TEST...]
check_case() {
  local name="$1" app="$2" mode="$3" module="$4"
  shift 4
  local venv="$work/$name"
  local -a pins
  read -r -a pins <<<"$app"
  install_app "$name" "${pins[@]}"
  if [ "$mode" = repeat ]; then
    "$venv/bin/python" -m pip install "${pip_q[@]}" . "${pins[@]}"
  else
    "$venv/bin/python" -m pip install "${pip_q[@]}" .
  fi
  nothing_moved "$name" "installing otel-provenance"
  echo "install_check[$name]: kept $(wc -l <"$work/$name.before.txt") preinstalled packages unchanged ($app; $mode); pip check clean"

  # The app may bring the CLI's libraries itself (ADK and Strands bring PyYAML, httpx, jsonschema):
  # checked only where it does not.
  if [ "$name" != adk ] && [ "$name" != strands ]; then
  for lib in yaml httpx jinja2; do
    if "$venv/bin/python" -c "import $lib" 2>/dev/null; then
      echo "install_check[$name]: the base install brought '$lib' (it belongs in the cli extra)" >&2
      exit 1
    fi
  done
  local status=0
  "$venv/bin/otel-provenance" gate check --help >"$work/cli.out" 2>"$work/cli.err" || status=$?
  if [ "$status" -ne 1 ] || ! grep -q "pip install 'otel-provenance\[cli\]'" "$work/cli.err"; then
    echo "install_check[$name]: without the cli extra the CLI should exit 1 naming the extra; got $status:" >&2
    cat "$work/cli.err" >&2
    exit 1
  fi
  echo "install_check[$name]: the CLI names the cli extra"
  fi

  (cd "$work" && APP_MODULE="$module" SPANS="$name.spans.jsonl" CASE="$name" "$venv/bin/python" - <<'PY'
import importlib
import importlib.util
import json
import os

import otel_provenance as op

importlib.import_module(os.environ["APP_MODULE"])  # the app still imports
case = os.environ["CASE"]

if importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is None:
    try:
        op.configure(exporter="otlp", endpoint="http://127.0.0.1:4318", set_global=False, metrics=False)
    except op.ConfigurationError as error:
        assert "pip install 'otel-provenance[otlp]'" in str(error), error
        print(f"install_check[{case}]: no OTLP exporter installed; op.configure names the otlp extra")
    else:
        raise AssertionError("op.configure(exporter='otlp') without the exporter should name the extra")

path = os.environ["SPANS"]
provider = op.configure(exporter="file", file=path, batch=False, set_global=False, metrics=False)


@op.tool(side_effect="read", tracer_provider=provider)
def lookup(order_id: str) -> dict:
    return {"customer": "c-1"}


for order in ("o-1", "o-2"):
    with op.run(inputs={"order_id": order}, agent_name="check", tracer_provider=provider):
        lookup(order_id=order)
provider.shutdown()
spans = [
    s
    for line in open(path, encoding="utf-8")
    for rs in json.loads(line)["resourceSpans"]
    for ss in rs["scopeSpans"]
    for s in ss["spans"]
]
names = sorted(s["name"] for s in spans)
assert names == ["execute_tool lookup"] * 2 + ["invoke_agent check"] * 2, names
assert len({s["traceId"] for s in spans}) == 2, "one trace per run"
print(f"install_check[{case}]: instrumented run OK (2 runs, 2 traces, 4 spans)")
PY
  )
  if [ "$#" -gt 0 ]; then
    run_framework_tests "$name" "$venv" "$@"
  fi
  rm -rf "$venv"
}

# check_printed_command NAME "APP PINS" EXTRA: the app, `pip install .`, then the install command the
# missing exporter's op.ConfigurationError prints, run as printed (the project itself from this checkout)
check_printed_command() {
  local name="$1" app="$2" extra="$3"
  local venv="$work/$name"
  local -a pins printed
  read -r -a pins <<<"$app"
  install_app "$name" "${pins[@]}"
  "$venv/bin/python" -m pip install "${pip_q[@]}" .
  local command
  command="$(EXTRA="$extra" "$venv/bin/python" - <<'PY'
import os
import re

import otel_provenance as op

protocol = {"otlp": "http/protobuf", "grpc": "grpc"}[os.environ["EXTRA"]]
try:
    op.configure(exporter="otlp", endpoint="http://127.0.0.1:4318", protocol=protocol, set_global=False,
                 metrics=False)
except op.ConfigurationError as error:
    found = re.search(r"pip install (?:'[^']*'(?: |$))+", str(error))
    assert found, f"no install command in: {error}"
    print(found[0].strip())
else:
    raise SystemExit("op.configure found an OTLP exporter already: nothing was printed to check")
PY
  )"
  echo "install_check[$name]: op.ConfigurationError prints: $command"
  mapfile -d '' -t printed < <(python3 -c 'import shlex, sys
for word in shlex.split(sys.argv[1]):
    print(word, end="\0")' "$command")
  if [ "${printed[0]} ${printed[1]}" != "pip install" ] || [ "${printed[2]}" != "otel-provenance[$extra]" ]; then
    echo "install_check[$name]: expected pip install 'otel-provenance[$extra]' ...; got: $command" >&2
    exit 1
  fi
  printed[2]=".[$extra]"  # this checkout, not an index's otel-provenance
  "$venv/bin/python" -m "${printed[@]}" "${pip_q[@]}"
  nothing_moved "$name" "the printed command"
  EXTRA="$extra" "$venv/bin/python" - <<'PY'
import os

import otel_provenance as op

protocol = {"otlp": "http/protobuf", "grpc": "grpc"}[os.environ["EXTRA"]]
provider = op.configure(exporter="otlp", endpoint="http://127.0.0.1:4318", protocol=protocol,
                        set_global=False, metrics=False, batch=False)
provider.shutdown()
PY
  echo "install_check[$name]: kept $(wc -l <"$work/$name.before.txt") preinstalled packages unchanged ($app; the printed command); pip check clean; op.configure(exporter=\"otlp\") works"
  rm -rf "$venv"
}

for case in $CASES; do
  case "$case" in
    pinned) check_case pinned "$APP_PINS" repeat opentelemetry.instrumentation.requests ;;
    bare) check_case bare "$APP_PINS" bare opentelemetry.instrumentation.requests ;;
    adk) check_case adk "google-adk==2.13.0" bare google.adk integration/test_framework_adk.py ;;
    adk-otlp) check_printed_command adk-otlp "google-adk==2.13.0" otlp ;;
    strands) check_case strands "strands-agents==1.62.0" bare strands integration/test_framework_strands.py ;;
    autogen)
      TEST_TOOLS="-c constraints/autogen.txt pytest hypothesis .[cli] opentelemetry-exporter-otlp-json-file" \
        check_case autogen "-c constraints/autogen.txt autogen-agentchat autogen-ext opentelemetry-sdk" repeat \
        autogen_agentchat integration/test_framework_autogen.py integration/test_agent_frameworks_gate.py -k autogen
      ;;
    *) echo "install_check: unknown case '$case' (pinned, bare, adk, adk-otlp, strands, autogen)" >&2; exit 2 ;;
  esac
done
