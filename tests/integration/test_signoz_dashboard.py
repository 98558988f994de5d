"""deploy/signoz/dashboard.json against SigNoz's v6 dashboard schema, and against what the package emits.

The schema is SigNoz's own: the OpenAPI schemas of ``POST /api/v2/dashboards`` at tags v0.135.0 and
v0.138.0 (``tests/fixtures/signoz/README.md`` says where from and how they are read as JSON Schema).
Beyond the schema, the server checks a dashboard in Go (``pkg/types/dashboardtypes/perses_dashboard_data.go``
``Validate``, ``perses_replicas.go`` ``validateGridLayoutGeometry``, ``perses_plugin_wrappers.go``
``allowedQueryKinds``, ``perses_dashboard.go`` ``validateDashboardName``/``validateDashboardTags``);
:func:`spec_problems` repeats those rules, each with the function it comes from. SigNoz's own v6 template
passes both and its v1 twin does not, so the checks are neither too strict nor too lax for what SigNoz
ships. The metric side is not copied: the attribute keys and values a panel may filter or group by are
collected from real tool calls through an InMemoryMetricReader.
"""

from __future__ import annotations

import copy
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import otel_provenance as op
from instrument_helpers import Traced
from interop import logs_sdk
from offline_helpers import reference_runs, write_jsonl
from otel_provenance.cli import run as cli_run
from otel_provenance.instrument.spans import metrics as tool_metrics
from otel_provenance.offline.report.evaluations import LABELS
from signoz_logs_double import SigNozLogsDouble

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "signoz" / "dashboard.json"
FIXTURES = ROOT / "tests" / "fixtures" / "signoz"
SCHEMA_ROOT = "DashboardtypesPostableDashboardV2"
NEWEST, OLDEST = "v0.138.0", "v0.135.0"  # the dashboard is for SigNoz v0.135 (v1 API retired) and later

RESOURCE_KEYS = {"service.version", "service.name"}
# The log records `gate check --export-findings` sends (one per rule result): their attributes.
FINDING_LABEL = "gen_ai.evaluation.score.label"
FINDING_RULE = "agent.rule.id"
FINDING_RELEASE = "agent.finding.release"  # the release a record judged (its resource is the gate's)
FINDING_ID = "agent.finding.id"
FINDING_LABELS = set(LABELS.values())  # every label --export-findings writes

FINDINGS_CONTRACT = """\
version: 1
name: dashboard-test
gate: {min_runs: 1, max_failing_runs: 0}
rules:
  - {id: blocked_calls, type: blocked_calls, code: BLOCKED_CALL, max: 0}
"""

# perses_plugin_wrappers.go: allowedQueryKinds
_ALL_BUT_PROMQL = {
    "signoz/BuilderQuery", "signoz/CompositeQuery", "signoz/Formula", "signoz/TraceOperator",
    "signoz/ClickHouseSQL",
}  # fmt: skip
ALLOWED_QUERY_KINDS = {
    "signoz/TimeSeriesPanel": _ALL_BUT_PROMQL | {"signoz/PromQLQuery"},
    "signoz/BarChartPanel": _ALL_BUT_PROMQL | {"signoz/PromQLQuery"},
    "signoz/NumberPanel": _ALL_BUT_PROMQL | {"signoz/PromQLQuery"},
    "signoz/HistogramPanel": _ALL_BUT_PROMQL | {"signoz/PromQLQuery"},
    "signoz/PieChartPanel": _ALL_BUT_PROMQL,
    "signoz/TablePanel": _ALL_BUT_PROMQL,
    "signoz/ListPanel": {"signoz/BuilderQuery"},
}
GRID_COLUMNS = 12  # perses_replicas.go: gridColumnCount
MAX_ITEMS_PER_GRID = 100  # maxItemsPerGridLayout
MAX_DISPLAY_NAME = 128  # MaxDisplayNameLen
MAX_TAGS = 10  # MaxTagsPerDashboard
RESERVED_TAG_KEYS = {"name", "description", "created_at", "updated_at", "created_by", "locked", "source"}
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")  # validation.IsDNS1123Label
PANEL_KEY = re.compile(r"[A-Za-z0-9_.-]+")  # conservative: what SigNoz's own templates use
IMAGE = re.compile(
    r"/assets/(Icons|Logos)/.+|data:image/(png|jpe?g|gif|webp|avif|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}"
)


def _as_json_schema(node: Any) -> Any:
    """One OpenAPI 3.0 schema as JSON Schema: ``nullable`` as a ``null`` type, a ``discriminator``
    choosing its variant by the discriminating property, objects closed as the server decodes them."""
    if isinstance(node, list):
        return [_as_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("discriminator", "example"):
            continue
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace("#/components/schemas/", "#/$defs/")
        elif key == "properties":
            out[key] = {name: _as_json_schema(s) for name, s in value.items()}
        else:
            out[key] = _as_json_schema(value)
    if out.pop("nullable", False):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False  # DisallowUnknownFields
    if "discriminator" in node:
        prop, mapping = node["discriminator"]["propertyName"], node["discriminator"]["mapping"]
        out.pop("oneOf", None)
        out["required"] = [prop]
        out["properties"] = {prop: {"enum": sorted(mapping)}}
        out["allOf"] = [
            {
                "if": {"properties": {prop: {"const": value}}},
                "then": {"$ref": _as_json_schema({"$ref": ref})["$ref"]},
            }
            for value, ref in sorted(mapping.items())
        ]
    return out


def _validator(tag: str) -> jsonschema.Draft202012Validator:
    path = FIXTURES / f"dashboard-v6.{tag}.openapi.json"
    schemas = json.loads(path.read_text())["components"]["schemas"]
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"#/$defs/{SCHEMA_ROOT}",
        "$defs": {name: _as_json_schema(s) for name, s in schemas.items()},
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def v6_schema() -> jsonschema.Draft202012Validator:
    return _validator(NEWEST)


def spec_problems(dashboard: dict) -> list[str]:
    """What SigNoz's Go validation (v0.138.0) refuses in a v6 dashboard the schema accepts; [] if none."""
    problems: list[str] = []
    spec = dashboard["spec"]
    # perses_dashboard.go: validateName, validateDashboardTags, validateImage
    if dashboard.get("generateName"):
        if dashboard.get("name"):
            problems.append("name must be empty when generateName is true")
        if not spec["display"]["name"]:
            problems.append("spec.display.name is required when generateName is true")
    elif not DNS_LABEL.fullmatch(dashboard.get("name", "")):
        problems.append(f"name {dashboard.get('name')!r} is not a DNS-1123 label")
    tags = dashboard.get("tags") or []
    if len(tags) > MAX_TAGS:
        problems.append(f"{len(tags)} tags; at most {MAX_TAGS}")
    problems += [
        f"tag key {t['key']!r} is reserved" for t in tags if t["key"].strip().lower() in RESERVED_TAG_KEYS
    ]
    if dashboard.get("image") and not IMAGE.fullmatch(dashboard["image"]):
        problems.append("image must be an /assets/Icons or /assets/Logos path, or a base64 image")
    # perses_dashboard_data.go: Validate
    names = [spec["display"]["name"]]
    variables = [v["spec"]["name"] for v in spec["variables"]]
    if len(set(variables)) != len(variables):
        problems.append(f"duplicate variable names {variables}")
    for key, panel in spec["panels"].items():
        if not PANEL_KEY.fullmatch(key):
            problems.append(f"panel key {key!r}")
        names.append(panel["spec"]["display"]["name"])
        kind = panel["spec"]["plugin"]["kind"]
        queries = panel["spec"]["queries"]
        if len(queries) != 1:
            problems.append(f"panel {key}: one query, found {len(queries)}")
        for query in queries:
            if query["spec"]["plugin"]["kind"] not in ALLOWED_QUERY_KINDS[kind]:
                problems.append(f"panel {key}: query kind {query['spec']['plugin']['kind']} not for {kind}")
    problems += [
        f"display name over {MAX_DISPLAY_NAME}: {n[:20]}…" for n in names if len(n) > MAX_DISPLAY_NAME
    ]
    placed: dict[str, str] = {}
    for li, layout in enumerate(spec["layouts"]):
        items = layout["spec"].get("items") or []
        if len(items) > MAX_ITEMS_PER_GRID:
            problems.append(f"layout {li}: {len(items)} items")
        for ii, item in enumerate(items):
            x, y, w, h = item["x"], item["y"], item["width"], item["height"]
            if (
                w < 1
                or h < 1
                or x < 0
                or y < 0
                or w > GRID_COLUMNS
                or x >= GRID_COLUMNS
                or x + w > GRID_COLUMNS
            ):
                problems.append(f"layout {li} item {ii}: geometry {x},{y} {w}x{h}")
            ref = item["content"]["$ref"]
            parts = ref.removeprefix("#/").split("/")
            if len(parts) != 3 or parts[:2] != ["spec", "panels"] or parts[2] not in spec["panels"]:
                problems.append(f"layout {li} item {ii}: {ref!r} names no panel")
            elif parts[2] in placed:
                problems.append(
                    f"layout {li} item {ii}: panel {parts[2]} already placed by {placed[parts[2]]}"
                )
            else:
                placed[parts[2]] = f"layout {li} item {ii}"
        for i, a in enumerate(items):
            for j in range(i + 1, len(items)):
                b = items[j]
                if (
                    a["x"] < b["x"] + b["width"]
                    and b["x"] < a["x"] + a["width"]
                    and a["y"] < b["y"] + b["height"]
                    and b["y"] < a["y"] + a["height"]
                ):
                    problems.append(f"layout {li}: items {i} and {j} overlap")
    return problems


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


# --- the format ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", [OLDEST, NEWEST])
def test_the_dashboard_validates_against_signoz_v6_schema(dashboard, tag: str) -> None:
    schema = _validator(tag)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in schema.iter_errors(dashboard)]
    assert errors == []
    assert dashboard["schemaVersion"] == "v6"  # perses_dashboard.go: SchemaVersion


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("signoz-template-flask-monitoring.v6.json", True),
        ("signoz-template-flask-monitoring.v1.json", False),
        ("otel-provenance-dashboard-v1.json", False),
    ],
)
def test_the_schema_takes_signoz_own_v6_template_and_refuses_v1_files(
    v6_schema, name: str, valid: bool
) -> None:
    document = _fixture(name)
    assert v6_schema.is_valid(document) is valid
    if valid:
        assert spec_problems(document) == []


def test_the_dashboard_passes_the_checks_signoz_makes_beyond_the_schema(dashboard) -> None:
    assert spec_problems(dashboard) == []
    [layout] = dashboard["spec"]["layouts"]  # and every panel is on the grid (SigNoz allows orphans)
    placed = {item["content"]["$ref"].rsplit("/", 1)[1] for item in layout["spec"]["items"]}
    assert placed == set(dashboard["spec"]["panels"])


def _broken(dashboard: dict, how: str) -> dict:
    broken = copy.deepcopy(dashboard)
    spec = broken["spec"]
    first, second = list(spec["panels"])[:2]
    items = spec["layouts"][0]["spec"]["items"]
    if how == "two queries":
        queries = spec["panels"][first]["spec"]["queries"]
        queries.append(copy.deepcopy(queries[0]))
    elif how == "promql in a table":
        table = next(p for p in spec["panels"].values() if p["spec"]["plugin"]["kind"] == "signoz/TablePanel")
        table["spec"]["queries"][0]["spec"]["plugin"] = {
            "kind": "signoz/PromQLQuery",
            "spec": {"query": "up"},
        }
    elif how == "placed twice":
        items.append({**items[0], "y": 1000})
    elif how == "overlap":
        items[1] = {**items[1], "x": items[0]["x"], "y": items[0]["y"]}
    elif how == "off the grid":
        items[0] = {**items[0], "x": 8, "width": 6}
    elif how == "unknown panel":
        items[0] = {**items[0], "content": {"$ref": "#/spec/panels/nope"}}
    elif how == "name and generateName":
        broken["name"] = "otel-provenance"
    elif how == "reserved tag":
        broken["tags"] = [{"key": "Locked", "value": "x"}]
    elif how == "duplicate variable":
        spec["variables"].append(copy.deepcopy(spec["variables"][0]))
    else:
        raise AssertionError(how)
    assert first != second
    return broken


@pytest.mark.parametrize(
    "how",
    [
        "two queries", "promql in a table", "placed twice", "overlap", "off the grid", "unknown panel",
        "name and generateName", "reserved tag", "duplicate variable",
    ],
)  # fmt: skip
def test_each_server_rule_is_checked(dashboard, v6_schema, how: str) -> None:
    broken = _broken(dashboard, how)
    assert v6_schema.is_valid(broken)  # only the Go rules catch these
    assert spec_problems(broken)


def test_a_member_signoz_does_not_decode_is_refused(dashboard, v6_schema) -> None:
    broken = copy.deepcopy(dashboard)
    next(iter(broken["spec"]["panels"].values()))["spec"]["plugin"]["spec"]["legend"]["colour"] = "red"
    assert not v6_schema.is_valid(broken)
    del broken["spec"]["panels"]
    assert not v6_schema.is_valid(broken)


# --- the panels --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> dict[str, set]:
    """attribute key -> values, from real calls: ok, retried, blocked, invented, failing, approved
    and denied by a person, and a run judged by its contract."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    tool_metrics.use_meter_provider(provider)
    traced = Traced()
    try:

        @op.tool(side_effect="write", tracer_provider=traced.provider)
        def refund(order_id: str) -> None:
            return None

        @op.tool(invented=("name",), tracer_provider=traced.provider)
        def create(name: str) -> None:
            raise RuntimeError

        @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
        def close(order_id: str) -> None:
            return None

        with op.run(inputs={"order_id": "o-1"}, approver=lambda request: True):
            close("o-1")
        with op.run(inputs={"order_id": "o-1"}, approver=lambda r: False), pytest.raises(op.ProvenanceError):
            close("o-1")
        contract = tmp_path_factory.mktemp("contract") / "contract.yaml"
        contract.write_text(
            "name: c\nversion: 1\nrules:\n  - {id: checked, type: required_spans, select: {step: check}}\n"
        )
        # a run judged when it ends, by a named agent (gen_ai.invoke_agent.duration by agent)
        with op.run(inputs={"order_id": "o-1"}, contract=contract, agent_name="refunds"):
            refund("o-1")
        with op.run(inputs={"order_id": "o-1"}, ledger_max_entries=1):
            refund("o-1")
            refund("o-1")
            with pytest.raises(op.ProvenanceError):
                refund("o-2")
            with pytest.raises(RuntimeError):
                create("new")
        data = reader.get_metrics_data()
    finally:
        tool_metrics.use_meter_provider(None)
        provider.shutdown()
    out: dict[str, set] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    for k, v in point.attributes.items():
                        out.setdefault(k, set()).add(v)
    return out


def _queries(dashboard: dict, signal: str | None = None):
    """(panel title, panel kind, query kind, builder spec) of every builder query."""
    for panel in dashboard["spec"]["panels"].values():
        for query in panel["spec"]["queries"]:
            plugin = query["spec"]["plugin"]
            assert plugin["kind"] == "signoz/BuilderQuery"
            if signal is None or plugin["spec"]["signal"] == signal:
                yield (
                    panel["spec"]["display"]["name"],
                    panel["spec"]["plugin"]["kind"],
                    query["kind"],
                    plugin["spec"],
                )


def test_every_panel_is_filterable_by_release(dashboard) -> None:
    [release] = dashboard["spec"]["variables"]
    assert release["kind"] == "ListVariable"
    assert release["spec"]["plugin"] == {
        "kind": "signoz/DynamicVariable",
        "spec": {"name": "service.version", "signal": "all"},  # metrics and logs alike
    }
    names = {v["spec"]["name"] for v in dashboard["spec"]["variables"]}
    for title, _, _, spec in _queries(dashboard):
        expression = spec["filter"]["expression"]
        # a finding names the release it judged; the agent's metrics carry it on their resource
        by = FINDING_RELEASE if spec["signal"] == "logs" else "service.version"
        assert f"{by} IN ${release['spec']['name']}" in expression, title
        for referenced in re.findall(r"\$([\w.]+)", expression):
            assert referenced in names, referenced


def test_metric_panels_use_only_metrics_and_attributes_the_package_emits(dashboard, emitted) -> None:
    for title, panel_kind, query_kind, spec in _queries(dashboard, "metrics"):
        assert (panel_kind, query_kind) == ("signoz/TimeSeriesPanel", "time_series"), title
        for agg in spec["aggregations"]:
            assert agg["metricName"] in tool_metrics.INSTRUMENTS, agg["metricName"]
            if agg["metricName"] in (tool_metrics.TOOL_DURATION, tool_metrics.AGENT_DURATION):  # percentiles
                assert agg["spaceAggregation"].startswith("p") and agg["timeAggregation"] == ""
            else:  # monotonic counters
                assert agg["timeAggregation"] in ("rate", "increase") and agg["spaceAggregation"] == "sum"
        for group in spec["groupBy"]:
            assert group["name"] in emitted or group["name"] in RESOURCE_KEYS, group["name"]
            assert group["fieldContext"] == ("resource" if group["name"] in RESOURCE_KEYS else "attribute")
            assert group["signal"] == "metrics" and group["fieldDataType"] == "string"
        for key, values in re.findall(
            r"([a-z_][\w.]*)\s+(?:=|IN)\s+(\([^)]*\)|'[^']*'|\$[\w.]+)", spec["filter"]["expression"]
        ):
            assert key in emitted or key in RESOURCE_KEYS, key
            for value in re.findall(r"'([^']*)'", values):
                assert value in emitted[key], (key, value)


def test_the_issue_panels_are_there(dashboard) -> None:
    def panels(metric, needle=""):
        return [
            title
            for title, _, _, spec in _queries(dashboard, "metrics")
            if any(a["metricName"] == metric for a in spec["aggregations"])
            and needle in spec["filter"]["expression"]
        ]

    assert panels(tool_metrics.TOOL_CALLS, "agent.tool.status = 'blocked'")
    assert panels(tool_metrics.TOOL_ARGUMENTS, "'assumed', 'invented'")
    assert panels(tool_metrics.TOOL_DURATION)
    assert panels(tool_metrics.TOOL_RETRIES)
    assert panels(tool_metrics.APPROVALS)
    assert panels(tool_metrics.GUARD_RUNS)
    assert panels(tool_metrics.AGENT_DURATION)
    metric_specs = [spec for *_, spec in _queries(dashboard, "metrics")]
    rate = [s for s in metric_specs if s["aggregations"][0]["timeAggregation"] == "rate"]
    assert rate and rate[0]["aggregations"][0]["metricName"] == tool_metrics.TOOL_CALLS
    tool_grouped = {
        a["metricName"]
        for s in metric_specs
        for a in s["aggregations"]
        if any(g["name"] == "gen_ai.tool.name" for g in s["groupBy"])
    }
    # every panel of a per-call metric splits by tool (a run's verdict and duration have no tool)
    per_run = {tool_metrics.GUARD_RUNS, tool_metrics.AGENT_DURATION}
    assert tool_grouped == set(tool_metrics.INSTRUMENTS) - per_run


def test_the_gate_findings_panel_counts_evaluation_results_by_label_and_rule(dashboard) -> None:
    [(title, panel_kind, query_kind, spec)] = list(_queries(dashboard, "logs"))
    assert title == "Gate findings"
    assert (panel_kind, query_kind) == ("signoz/TablePanel", "scalar")  # a table of counts over the window
    assert spec["aggregations"] == [{"expression": f"count_distinct({FINDING_ID})"}]  # a re-run: once
    groups = {(g["name"], g["fieldContext"]) for g in spec["groupBy"]}
    assert {
        (FINDING_LABEL, "attribute"),
        (FINDING_RULE, "attribute"),
        (FINDING_RELEASE, "attribute"),
    } == groups
    # SigNoz's logs exporter keeps no event name: the records are picked by attributes only they carry
    expression = spec["filter"]["expression"]
    [labels] = re.findall(rf"{re.escape(FINDING_LABEL)} IN \(([^)]*)\)", expression)
    assert set(re.findall(r"'([^']*)'", labels)) == FINDING_LABELS
    assert f"{FINDING_RULE} EXISTS" in expression


@logs_sdk
def test_the_gate_findings_query_returns_the_chosen_releases_findings(dashboard, tmp_path) -> None:
    """The panel's own query, sent as SigNoz's UI sends a table panel's (requestType scalar, the
    release variable's choice in ``variables``) to the SigNoz double after two releases were gated —
    release 2.0.0 twice: choosing 2.0.0 shows 2.0.0's findings, each counted once; every release
    (``__all__``) shows both."""
    [(_, _, _, spec)] = list(_queries(dashboard, "logs"))
    [variable] = dashboard["spec"]["variables"]
    contract = tmp_path / "contract.yaml"
    contract.write_text(FINDINGS_CONTRACT)
    with SigNozLogsDouble() as double:
        for release in ("1.0.0", "2.0.0", "2.0.0"):  # 2.0.0's CI job re-run
            traces = tmp_path / f"{release}.jsonl"
            if not traces.exists():
                good, bad = reference_runs(release)
                write_jsonl([*good, *bad], traces)
            argv = ["gate", "check", "--contract", contract, "--release", release, "--export-findings"]
            argv += ["--findings-endpoint", double.url, traces]
            assert cli_run([str(a) for a in argv], io.StringIO(), io.StringIO()) == 2

        def table(chosen: object) -> list[list]:
            now = int(time.time() * 1000)
            body = {
                "schemaVersion": "v1", "start": now - 3_600_000, "end": now + 60_000, "requestType": "scalar",
                "compositeQuery": {"queries": [{"type": "builder_query", "spec": spec}]},
                "variables": {variable["spec"]["name"]: {"type": "dynamic", "value": chosen}},
                "formatOptions": {"formatTableResultForUI": False, "fillGaps": False}, "noCache": True,
            }  # fmt: skip
            answer = httpx.post(
                f"{double.url}/api/v5/query_range", json=body, headers={"SIGNOZ-API-KEY": double.api_key}
            )
            assert answer.status_code == 200, answer.text
            [result] = answer.json()["data"]["data"]["results"]
            names = [c["name"] for c in result["columns"]]
            assert names == [g["name"] for g in spec["groupBy"]] + [spec["aggregations"][0]["expression"]]
            return sorted(result["data"])

        assert len(double.logs) == 9  # a finding and two run verdicts per gate run, three runs
        chosen = table(["2.0.0"])
        every = table("__all__")
    run_verdict = "otel-provenance.run"
    assert chosen == [
        ["2.0.0", "fail", "blocked_calls", 1],
        ["2.0.0", "fail", run_verdict, 1],
        ["2.0.0", "pass", run_verdict, 1],
    ]
    assert every == sorted([["1.0.0", *row[1:]] for row in chosen] + chosen)
