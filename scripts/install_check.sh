#!/usr/bin/env bash
# Install otel-provenance into an application's existing environment, as a user would, and prove it
# leaves the application's OpenTelemetry alone:
#   1. a fresh venv gets the app's pins first: an older SDK and the instrumentation package released
#      with it (APP_PINS overrides; default: the oldest supported SDK, constraints/oldest.txt);
#   2. `pip install <this repo> <the same pins>` (as with the app's requirements file) must resolve;
#   3. every package installed in step 1 keeps its version, and `pip check` is clean;
#   4. the base install brings no YAML library, HTTP client or template engine, and the CLI names its extra;
#   5. an instrumented run works there: one trace per op.run, written to an OTLP JSON Lines file.
set -euo pipefail
cd "$(dirname "$0")/.."
APP_PINS="${APP_PINS:-opentelemetry-sdk==1.33.0 opentelemetry-instrumentation-requests==0.54b0}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="$work/app"
pip_q=(-q --disable-pip-version-check)

python3 -m venv "$venv"
read -r -a pins <<<"$APP_PINS"
"$venv/bin/python" -m pip install "${pip_q[@]}" "${pins[@]}"
"$venv/bin/python" -m pip freeze --all | sort >"$work/before.txt"

"$venv/bin/python" -m pip install "${pip_q[@]}" . "${pins[@]}"
"$venv/bin/python" -m pip freeze --all | sort >"$work/after.txt"

changed="$(comm -23 "$work/before.txt" "$work/after.txt")"
if [ -n "$changed" ]; then
  echo "install_check: installing otel-provenance changed the application's packages:" >&2
  echo "$changed" | sed 's/^/  was: /' >&2
  exit 1
fi
"$venv/bin/python" -m pip check
echo "install_check: kept $(wc -l <"$work/before.txt") preinstalled packages unchanged ($APP_PINS); pip check clean"

for module in yaml httpx jinja2; do
  if "$venv/bin/python" -c "import $module" 2>/dev/null; then
    echo "install_check: the base install brought '$module' (it belongs in the cli extra)" >&2
    exit 1
  fi
done
status=0
"$venv/bin/otel-provenance" gate check --help >"$work/cli.out" 2>"$work/cli.err" || status=$?
if [ "$status" -ne 1 ] || ! grep -q "pip install 'otel-provenance\[cli\]'" "$work/cli.err"; then
  echo "install_check: without the cli extra the CLI should exit 1 naming the extra; got $status:" >&2
  cat "$work/cli.err" >&2
  exit 1
fi
echo "install_check: base install has no YAML/HTTP client/Jinja2; the CLI names the cli extra"

(cd "$work" && "$venv/bin/python" - <<'PY'
import json

import opentelemetry.instrumentation.requests  # the app's instrumentation still imports
import otel_provenance as op

provider = op.configure(exporter="file", file="spans.jsonl", batch=False, set_global=False)


@op.tool(side_effect="read", tracer_provider=provider)
def lookup(order_id: str) -> dict:
    return {"customer": "c-1"}


for order in ("o-1", "o-2"):
    with op.run(inputs={"order_id": order}, agent_name="check", tracer_provider=provider):
        lookup(order_id=order)
provider.shutdown()
spans = [
    s
    for line in open("spans.jsonl", encoding="utf-8")
    for rs in json.loads(line)["resourceSpans"]
    for ss in rs["scopeSpans"]
    for s in ss["spans"]
]
names = sorted(s["name"] for s in spans)
assert names == ["execute_tool lookup"] * 2 + ["invoke_agent check"] * 2, names
assert len({s["traceId"] for s in spans}) == 2, "one trace per run"
print("install_check: instrumented run OK (2 runs, 2 traces, 4 spans)")
PY
)
