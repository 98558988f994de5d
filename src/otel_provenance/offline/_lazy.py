"""A package's public names, each imported from its module when first asked for (PEP 562): importing
one layer never drags in the rest, and a command's start-up loads only what it uses (issue #46)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, table: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The package's ``__getattr__``: ``table`` maps each public name to the module (relative to
    ``package``) that holds it; a name once loaded is kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
