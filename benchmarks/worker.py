"""One measurement in a fresh process, so that peak RSS belongs to that measurement alone.

``python -m benchmarks.worker gate|parse|profile ARGS…`` prints one JSON line:
``{"seconds": wall time of the work, "maxrss_kb": peak RSS of this process, "exit": code, ...}``
(peak RSS from ``/proc/self/status`` ``VmHWM``; see :func:`peak_rss_kb`).

- ``gate CONTRACT RELEASE FILE [--shard I/N --partial OUT]``: ``otel-provenance gate check`` in-process
  through ``otel_provenance.cli.run`` (report text discarded).
- ``merge CONTRACT PARTIAL…``: ``otel-provenance gate merge``.
- ``parse FILE``: the baseline — read the file line by line and parse each line with the fastest JSON
  parser installed (orjson if present, else the standard library).
- ``profile OUT.prof gate …``: the ``gate`` work under cProfile, stats written to ``OUT.prof``.
"""

from __future__ import annotations

import io
import json
import resource
import sys
import time
from collections.abc import Callable


def peak_rss_kb() -> int:
    """Peak RSS of this process since it started this program.

    ``VmHWM`` from ``/proc/self/status``, not ``getrusage().ru_maxrss``: Linux carries ``ru_maxrss``
    across ``exec``, so a worker forked from a large parent would report the parent's size.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _loads() -> tuple[Callable[[bytes], object], str]:
    try:
        import orjson  # type: ignore[import-not-found]

        return orjson.loads, "orjson"
    except ImportError:
        return json.loads, "json"


def parse_file(path: str) -> dict[str, object]:
    loads, name = _loads()
    spans = 0
    with open(path, "rb") as fh:
        for line in fh:
            doc = loads(line)
            for rs in doc["resourceSpans"]:  # type: ignore[index]
                for ss in rs["scopeSpans"]:
                    spans += len(ss["spans"])
    return {"exit": 0, "spans": spans, "parser": name}


def gate_check(contract: str, release: str, path: str, *extra: str) -> dict[str, object]:
    from otel_provenance.cli import run

    out, err = io.StringIO(), io.StringIO()
    code = run(["gate", "check", "--contract", contract, "--release", release, path, *extra], out, err)
    return {"exit": code, "stderr": err.getvalue()[-500:]}


def gate_merge(contract: str, *partials: str) -> dict[str, object]:
    from otel_provenance.cli import run

    out, err = io.StringIO(), io.StringIO()
    code = run(["gate", "merge", "--contract", contract, *partials], out, err)
    return {"exit": code, "stderr": err.getvalue()[-500:]}


_WORK = {"gate": gate_check, "merge": gate_merge, "parse": parse_file}


def main(argv: list[str]) -> int:
    if argv[0] == "profile":
        import cProfile

        target, work, args = argv[1], _WORK[argv[2]], argv[3:]
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        result = profiler.runcall(work, *args)
        seconds = time.perf_counter() - t0
        profiler.dump_stats(target)
    else:
        work, args = _WORK[argv[0]], argv[1:]
        t0 = time.perf_counter()
        result = work(*args)
        seconds = time.perf_counter() - t0
    result["seconds"] = seconds
    result["maxrss_kb"] = peak_rss_kb()
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
