"""The benchmark's own venv, ``.venv-agentdojo`` at the repository root (git-ignored by a
``.gitignore`` of its own): AgentDojo pulls in model SDKs (OpenAI, Anthropic, Google, Cohere,
LangChain) that the package's own venv must not get. It holds ``agentdojo`` and this package,
installed editable from this checkout, at the versions of ``constraints/agentdojo.txt``.

Imported by the main venv's side (``benchmarks/case_agentdojo.py``, the test): it never imports
``agentdojo``. :func:`ensure` makes the venv once and again only when the constraints or
``pyproject.toml`` change; concurrent callers wait for one another.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-agentdojo"
CONSTRAINTS = ROOT / "constraints" / "agentdojo.txt"
REQUIREMENT = "agentdojo==0.1.35"
_STAMP = VENV / ".otel-provenance-installed"


class Unavailable(RuntimeError):
    """The venv could not be made (no network, no index, an install that failed); says why."""


def python() -> Path:
    return VENV / "bin" / "python"


def ready() -> bool:
    """The venv exists and was installed from today's constraints and ``pyproject.toml``."""
    return python().exists() and _STAMP.exists() and _STAMP.read_text() == _fingerprint()


def ensure(log: Callable[[str], None] = lambda _: None) -> Path:
    """The venv's interpreter, made or refreshed first if needed."""
    if ready():
        return python()
    checkout = hashlib.sha256(bytes(ROOT)).hexdigest()[:12]
    lock = Path(tempfile.gettempdir()) / f"otel-provenance-agentdojo-{checkout}.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if ready():  # another process made it while this one waited
            return python()
        log(f"making {VENV.name} ({REQUIREMENT} and this checkout, -c {CONSTRAINTS.relative_to(ROOT)}) ...")
        if not python().exists():
            _run([sys.executable, "-m", "venv", str(VENV)], "python -m venv")
        (VENV / ".gitignore").write_text("# made by benchmarks/agentdojo/venv.py\n*\n")
        _run(
            [
                str(python()),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "-c",
                str(CONSTRAINTS),
                REQUIREMENT,
                "-e",
                str(ROOT),
            ],
            "pip install",
        )
        _STAMP.write_text(_fingerprint())
    return python()


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (CONSTRAINTS, ROOT / "pyproject.toml"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Unavailable(f"{what} for {VENV.name} failed: {error}") from error
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise Unavailable(f"{what} for {VENV.name} exited {done.returncode}:\n{tail}")


__all__ = ["CONSTRAINTS", "REQUIREMENT", "VENV", "Unavailable", "ensure", "python", "ready"]
