"""deploy/signoz/dashboard.json against SigNoz v0.129.0's dashboard format, and against the metrics.

The format is SigNoz's own at tag v0.129.0 (commit a8f6b8187e8d4f0f03797281a1e5668f3959e7cf):
``frontend/src/types/api/dashboard/getAll.ts`` (``DashboardData``, ``IBaseWidget``/``Widgets``,
``IDashboardVariable``), ``frontend/src/types/api/queryBuilder/queryBuilderData.ts`` (``Query``,
``IBuilderQuery``), ``frontend/src/types/api/v5/queryRange.ts`` (``MetricAggregation`` and its
enums), ``frontend/src/constants/queryBuilder.ts`` (``PANEL_TYPES``) and the server's
``pkg/types/dashboardtypes/dashboard.go`` (widgets are a list of objects with ``id`` and a
``query`` whose builder queries each need a string ``queryName``). The enums below are copied from
those files. The metric side is not copied: the attribute keys and values a panel may filter or
group by are collected from real tool calls through an InMemoryMetricReader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import otel_provenance as op
from instrument_helpers import Traced
from otel_provenance.instrument import metrics as tool_metrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "signoz" / "dashboard.json"

# getAll.ts
DASHBOARD_KEYS = {
    "description",
    "tags",
    "name",
    "widgets",
    "title",
    "layout",
    "panelMap",
    "variables",
    "version",
    "image",
}
EXTRA_DASHBOARD_KEYS = {"uploadedGrafana"}  # present in SigNoz's own integration dashboards at v0.129.0
WIDGET_REQUIRED = {
    "id", "panelTypes", "title", "description", "opacity", "nullZeroValues", "timePreferance",
    "softMin", "softMax", "selectedLogFields", "selectedTracesFields", "query",
}  # fmt: skip
VARIABLE_REQUIRED = {"id", "description", "type", "sort", "multiSelect", "showALLOption"}
VARIABLE_TYPES = {"QUERY", "TEXTBOX", "CUSTOM", "DYNAMIC"}
VARIABLE_SORTS = {"DISABLED", "ASC", "DESC"}
DYNAMIC_SOURCES = {"All telemetry", "Logs", "Traces", "Metrics"}
# constants/queryBuilder.ts, container/NewWidget/RightContainer/timeItems.ts
PANEL_TYPES = {"graph", "value", "table", "list", "trace", "bar", "pie", "histogram", "EMPTY_WIDGET"}
TIME_PREFERENCES = {
    "GLOBAL_TIME", "LAST_5_MIN", "LAST_15_MIN", "LAST_30_MIN", "LAST_1_HR", "LAST_6_HR", "LAST_1_DAY",
    "LAST_3_DAYS", "LAST_1_WEEK", "LAST_1_MONTH",
}  # fmt: skip
# queryBuilderData.ts, types/common/dashboard.ts, types/common/queryBuilder.ts
QUERY_REQUIRED = {"queryType", "promql", "builder", "clickhouse_sql", "id"}
QUERY_TYPES = {"builder", "clickhouse_sql", "promql"}
BUILDER_QUERY_REQUIRED = {
    "queryName", "dataSource", "functions", "groupBy", "expression", "disabled", "having", "limit",
    "stepInterval", "orderBy", "legend",
}  # fmt: skip
DATA_SOURCES = {"metrics", "traces", "logs"}
# v5/queryRange.ts
TEMPORALITIES = {"cumulative", "delta", ""}
TIME_AGGREGATIONS = {"latest", "sum", "avg", "min", "max", "count", "count_distinct", "rate", "increase", ""}
SPACE_AGGREGATIONS = {"sum", "avg", "min", "max", "count", "p50", "p75", "p90", "p95", "p99", ""}
GRID_COLUMNS = 12

RESOURCE_KEYS = {"service.version", "service.name"}


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


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
        with op.run(inputs={"order_id": "o-1"}, contract=contract):  # a run judged when it ends
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


def _queries(dashboard):
    for widget in dashboard["widgets"]:
        for query in widget["query"]["builder"]["queryData"]:
            yield widget, query


def test_top_level_matches_dashboard_data(dashboard):
    assert set(dashboard) <= DASHBOARD_KEYS | EXTRA_DASHBOARD_KEYS
    assert isinstance(dashboard["title"], str) and dashboard["title"]
    assert dashboard["version"] == "v5"  # query builder v5 filters (expressions), as in SigNoz's own
    assert all(isinstance(t, str) for t in dashboard["tags"])
    assert isinstance(dashboard["widgets"], list) and isinstance(dashboard["layout"], list)


def test_widgets_and_queries_match_the_types(dashboard):
    ids = [w["id"] for w in dashboard["widgets"]]
    assert len(set(ids)) == len(ids)
    for widget in dashboard["widgets"]:
        assert set(widget) >= WIDGET_REQUIRED, WIDGET_REQUIRED - set(widget)
        assert widget["panelTypes"] in PANEL_TYPES
        assert widget["timePreferance"] in TIME_PREFERENCES
        query = widget["query"]
        assert set(query) >= QUERY_REQUIRED
        assert query["queryType"] in QUERY_TYPES
        assert set(query["builder"]) >= {"queryData", "queryFormulas"}
        for builder in query["builder"]["queryData"]:
            assert set(builder) >= BUILDER_QUERY_REQUIRED, BUILDER_QUERY_REQUIRED - set(builder)
            assert isinstance(builder["queryName"], str)  # dashboard.go refuses anything else
            assert builder["dataSource"] in DATA_SOURCES
            assert isinstance(builder["filter"]["expression"], str)
            for agg in builder["aggregations"]:
                assert set(agg) >= {"metricName", "temporality", "timeAggregation", "spaceAggregation"}
                assert agg["temporality"] in TEMPORALITIES
                assert agg["timeAggregation"] in TIME_AGGREGATIONS
                assert agg["spaceAggregation"] in SPACE_AGGREGATIONS
            for group in builder["groupBy"]:
                assert set(group) >= {"key", "type"} and group["type"] in ("tag", "resource")


def test_layout_places_every_widget_once_without_overlap(dashboard):
    layout = dashboard["layout"]
    assert sorted(item["i"] for item in layout) == sorted(w["id"] for w in dashboard["widgets"])
    cells = set()
    for item in layout:
        assert item["x"] >= 0 and item["w"] > 0 and item["x"] + item["w"] <= GRID_COLUMNS
        for x in range(item["x"], item["x"] + item["w"]):
            for y in range(item["y"], item["y"] + item["h"]):
                assert (x, y) not in cells, item
                cells.add((x, y))


def test_every_panel_is_filterable_by_service_version(dashboard):
    variables = dashboard["variables"]
    names = set()
    for vid, variable in variables.items():
        assert set(variable) >= VARIABLE_REQUIRED and variable["id"] == vid
        assert variable["type"] in VARIABLE_TYPES and variable["sort"] in VARIABLE_SORTS
        names.add(variable["name"])
    [release] = [v for v in variables.values() if v.get("dynamicVariablesAttribute") == "service.version"]
    assert release["type"] == "DYNAMIC" and release["dynamicVariablesSource"] in DYNAMIC_SOURCES
    for widget, query in _queries(dashboard):
        expression = query["filter"]["expression"]
        assert f"service.version IN ${release['name']}" in expression, widget["title"]
        for referenced in re.findall(r"\$([\w.]+)", expression):
            assert referenced in names, referenced


def test_panels_use_only_metrics_and_attributes_the_package_emits(dashboard, emitted):
    for _, query in _queries(dashboard):
        for agg in query["aggregations"]:
            assert agg["metricName"] in tool_metrics.INSTRUMENTS, agg["metricName"]
            if agg["metricName"] == tool_metrics.TOOL_DURATION:  # a histogram: percentiles
                assert agg["spaceAggregation"].startswith("p") and agg["timeAggregation"] == ""
            else:  # monotonic counters
                assert agg["timeAggregation"] in ("rate", "increase") and agg["spaceAggregation"] == "sum"
        for group in query["groupBy"]:
            assert group["key"] in emitted or group["key"] in RESOURCE_KEYS, group["key"]
            assert (group["type"] == "resource") == (group["key"] in RESOURCE_KEYS)
        expression = query["filter"]["expression"]
        for key, values in re.findall(
            r"([a-z_][\w.]*)\s+(?:=|IN)\s+(\([^)]*\)|'[^']*'|\$[\w.]+)", expression
        ):
            assert key in emitted or key in RESOURCE_KEYS, key
            for value in re.findall(r"'([^']*)'", values):
                assert value in emitted[key], (key, value)


def test_the_issue_panels_are_there(dashboard):
    def panels(metric, needle=""):
        return [
            w["title"]
            for w, q in _queries(dashboard)
            if any(a["metricName"] == metric for a in q["aggregations"])
            and needle in q["filter"]["expression"]
        ]

    assert panels(tool_metrics.TOOL_CALLS, "agent.tool.status = 'blocked'")
    assert panels(tool_metrics.TOOL_ARGUMENTS, "'assumed', 'invented'")
    assert panels(tool_metrics.TOOL_DURATION)
    assert panels(tool_metrics.TOOL_RETRIES)
    assert panels(tool_metrics.APPROVALS)
    rate = [q for _, q in _queries(dashboard) if q["aggregations"][0]["timeAggregation"] == "rate"]
    assert rate and rate[0]["aggregations"][0]["metricName"] == tool_metrics.TOOL_CALLS
    tool_grouped = {
        a["metricName"]
        for _, q in _queries(dashboard)
        for a in q["aggregations"]
        if any(g["key"] == "gen_ai.tool.name" for g in q["groupBy"])
    }
    assert panels(tool_metrics.GUARD_RUNS)
    # every panel of a per-call metric splits by tool (a run's verdict has no tool)
    assert tool_grouped == set(tool_metrics.INSTRUMENTS) - {tool_metrics.GUARD_RUNS}
