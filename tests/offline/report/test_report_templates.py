"""The Jinja2 templates of the HTML reports: how values are escaped, what the templates may use, and
who imports Jinja2. (``test_report_html.py`` checks the pages themselves; the byte-for-byte
comparison with the f-string pages they replaced was made once, outside the suite — CHANGELOG.)"""

from __future__ import annotations

import fnmatch
import html
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from jinja2 import StrictUndefined, UndefinedError, nodes
from markupsafe import Markup

from otel_provenance.offline.report import templating

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "src" / "otel_provenance"
TEMPLATES = PACKAGE / "offline" / "report" / "templates"
# A filter may return Markup, which the environment's finalize lets through unescaped: each filter a
# template uses is a decision. These three return plain text (join: when no item is Markup).
ALLOWED_FILTERS = {"join", "length", "upper"}
IMPORT = re.compile(r"^\s*(import|from)\s+(jinja2|markupsafe)\b", re.MULTILINE)


def _templates() -> list[str]:
    return sorted(p.name for p in TEMPLATES.iterdir() if p.is_file())


def test_one_environment_autoescaping_and_strict() -> None:
    env = templating.environment()
    assert templating.environment() is env  # built once
    assert env.autoescape is True and env.undefined is StrictUndefined
    with pytest.raises(UndefinedError):
        templating.render("audit.html.j2", title="t", page_format="f")  # a page without its data


HOSTILE = [
    "<script>&'\"",
    "\x00\x07\x1b\x7f\x85\ud800\udfff\ufdd0\ufffe",
    "日本 🚀 e\u0301 \u202e",
    "{{ 7*7 }}",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_every_value_is_escaped_as_the_pages_always_were(value: str) -> None:
    """U+FFFD for what HTML may not hold, then ``html.escape(quote=True)``: ``&quot;``/``&#x27;``."""
    page = templating.environment().from_string('<p title="{{ v }}">{{ v }}</p>').render(v=value)
    cleaned = "".join("\ufffd" if templating._INVALID.match(c) else c for c in value)
    expected = html.escape(cleaned, quote=True)
    assert page == f'<p title="{expected}">{expected}</p>'


def test_only_markup_a_macro_rendered_passes_through() -> None:
    class Pretends:
        def __html__(self) -> str:
            return "<b>trusted?</b>"

        def __str__(self) -> str:
            return "<b>no</b>"

    env = templating.environment()
    page = env.from_string(
        "{% macro bold(x) %}<b>{{ x }}</b>{% endmacro %}{{ bold(v) }} {{ p }} {{ items|join(', ') }}"
    ).render(v="<i>", p=Pretends(), items=["<a>", "'"])
    assert page == "<b>&lt;i&gt;</b> &lt;b&gt;no&lt;/b&gt; &lt;a&gt;, &#x27;"
    assert env.from_string("{{ m }}").render(m=Markup("<b>")) == "<b>"


@pytest.mark.parametrize("name", _templates())
def test_templates_use_no_escape_hatch(name: str) -> None:
    env = templating.environment()
    source, _, _ = env.loader.get_source(env, name)
    tree = env.parse(source, name)
    filters = {f.name for f in tree.find_all(nodes.Filter)}
    assert filters <= ALLOWED_FILTERS, f"{name}: {filters - ALLOWED_FILTERS}"
    assert not list(tree.find_all((nodes.ScopedEvalContextModifier, nodes.EvalContextModifier)))
    assert "Markup" not in {n.name for n in tree.find_all(nodes.Name)}
    assert "<script" not in source.lower()


def test_every_template_is_package_data() -> None:
    """A non-editable install carries ``templates/`` only if package-data names its files."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["otel_provenance"]
    for name in _templates():
        path = (TEMPLATES / name).relative_to(PACKAGE).as_posix()
        assert any(fnmatch.fnmatch(path, p) for p in patterns), path
    assert any("Jinja2" in dep for dep in config["project"]["optional-dependencies"]["cli"])


def test_the_base_install_and_the_cli_import_no_jinja2() -> None:
    """Jinja2 is the cli extra's: an application imports the package root and ``instrument`` only,
    and the command line imports it when it renders a page, not before."""
    code = (
        "import importlib, pkgutil, sys, otel_provenance, otel_provenance.instrument as ins\n"
        "for n in otel_provenance.__all__: getattr(otel_provenance, n)\n"
        "for m in ('errors', 'semconv', 'budget_law'): importlib.import_module('otel_provenance.' + m)\n"
        "for m in pkgutil.walk_packages(ins.__path__, 'otel_provenance.instrument.'):\n"
        "    importlib.import_module(m.name)\n"
        "import otel_provenance.cli, otel_provenance.offline.report\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'markupsafe')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    importers = {p.name for p in PACKAGE.rglob("*.py") if IMPORT.search(p.read_text(encoding="utf-8"))}
    assert importers == {"templating.py"}


def test_without_jinja2_only_the_html_report_fails_and_says_what_to_install(tmp_path: Path) -> None:
    from contract_runs import export_runs, triage_run

    export_runs([triage_run("a")], str(tmp_path / "a.jsonl"))
    code = (
        "import sys; sys.modules['jinja2'] = None\n"  # as if not installed: import raises
        "from otel_provenance.cli import main\n"
        "main()\n"
    )

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )

    plain = cli("audit", "a.jsonl")
    assert plain.returncode in (0, 2, 3) and "Jinja2" not in plain.stderr, plain.stderr
    proc = cli("audit", "a.jsonl", "--report-html", "page.html")
    assert proc.returncode == 1
    assert (
        "the HTML report needs Jinja2" in proc.stderr and "pip install 'otel-provenance[cli]'" in proc.stderr
    )
    assert "Traceback" not in proc.stderr and not (tmp_path / "page.html").exists()
