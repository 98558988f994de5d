"""SigNoz's scalar answers (a dashboard's table panel) over the logs the logs double holds.

A table panel sends its builder query with ``requestType: "scalar"``: rows grouped by the ``groupBy``
keys, one aggregation each. This follows SigNoz v0.129+ where the panel depends on it:

- aggregations (``pkg/querybuilder/agg_funcs.go``): ``count()`` and ``count_distinct(key)`` (alias
  ``countdistinct``; ClickHouse's ``countDistinct`` skips NULL, so a row without the key adds nothing);
  anything else is a 400 naming the double's limit, never a made-up number;
- group values as ``toString`` of the key's value, NULL (``None``) when a row lacks it
  (``pkg/telemetrylogs/groupby_unknown_key_test.go``); rows ordered by the aggregation, largest first
  (``ORDER BY __result_0 DESC``), then by group for a stable answer;
- the answer (``pkg/types/querybuildertypes/querybuildertypesv5``): ``ScalarData`` —
  ``{queryName, columns, data}``, each column a ``ColumnDescriptor`` (the field key, ``queryName``,
  ``aggregationIndex``, ``columnType`` ``group`` or ``aggregation``), each row its groups then its value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from signoz_double import Key

KEY_FIELDS = {"name", "description", "unit", "signal", "fieldContext", "fieldDataType"}
_AGGREGATION = re.compile(r"\s*(count|count_?distinct)\s*\(\s*([^()\s]*)\s*\)\s*", re.IGNORECASE)


class ScalarRefused(Exception):
    """A scalar query the double cannot answer as SigNoz would: a 400 naming what."""


def _strict(obj: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ScalarRefused(f"{where} must be an object")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ScalarRefused(f'unknown field "{unknown[0]}" in {where}')
    return obj


def _aggregation(spec: dict[str, Any]) -> tuple[str | None, str]:
    """(the key count_distinct counts, None for count(); the column's name) of the one aggregation."""
    aggregations = spec.get("aggregations")
    if not isinstance(aggregations, list) or len(aggregations) != 1:
        raise ScalarRefused("the double answers exactly one aggregation per scalar query")
    aggregation = _strict(aggregations[0], {"expression", "alias"}, "aggregation")
    expression = str(aggregation.get("expression", ""))
    match = _AGGREGATION.fullmatch(expression)
    if match is None:
        raise ScalarRefused(f"the double answers count() and count_distinct(key) only, got {expression!r}")
    function = "count" if match[1].lower() == "count" else "count_distinct"
    key = match[2] or None
    if (function == "count_distinct") != (key is not None):
        raise ScalarRefused(f"{function} takes {'one key' if function == 'count_distinct' else 'no key'}")
    return key, str(aggregation.get("alias") or expression)


def scalar_result(
    spec: dict[str, Any],
    rows: Iterable[Any],
    lookup: Callable[[Any, Key], Any],
    parse_key: Callable[[str], Key],
) -> dict[str, Any]:
    """The ``ScalarData`` of ``spec`` over ``rows`` (already filtered and windowed); ``lookup`` reads a
    key of a row, ``parse_key`` reads a key's text as SigNoz does."""
    counted, column = _aggregation(spec)
    groups = [_strict(g, KEY_FIELDS, "group by key") for g in spec.get("groupBy") or []]
    keys = [Key(g["name"], g.get("fieldContext"), g.get("fieldDataType")) for g in groups]
    counted_key = parse_key(counted) if counted is not None else None
    buckets: dict[tuple[Any, ...], set[Any] | list[Any]] = {}
    for row in rows:
        group = tuple(_text(lookup(row, key)) for key in keys)
        bucket = buckets.setdefault(group, set() if counted_key is not None else [])
        if counted_key is None:
            bucket.append(row)  # type: ignore[union-attr]
        else:
            value = lookup(row, counted_key)
            if value is not None:
                bucket.add(value)  # type: ignore[union-attr]
    data = [[*group, len(found)] for group, found in buckets.items()]
    data.sort(key=lambda r: tuple("" if v is None else str(v) for v in r[:-1]))
    data.sort(key=lambda r: r[-1], reverse=True)
    name = spec.get("name", "A")
    columns = [{**group, "queryName": name, "aggregationIndex": 0, "columnType": "group"} for group in groups]
    columns.append({"name": column, "queryName": name, "aggregationIndex": 0, "columnType": "aggregation"})
    return {"queryName": name, "columns": columns, "data": data}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
