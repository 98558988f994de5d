"""pyproject.toml builds as a user's `pip install .` builds it: no deprecation warning from the build
backend, and the licence as an SPDX expression in the wheel's metadata (#48: the `license = {text = …}`
table warned on every build, and setuptools stops building it after 2027-02-18)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_builds_without_deprecation_warnings_and_names_its_licence(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp_path), "-v"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    output = done.stdout + done.stderr
    warned = output.find("SetuptoolsDeprecationWarning")
    assert warned < 0, output[max(warned - 500, 0) :][:2000]
    [wheel] = tmp_path.glob("otel_provenance-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
