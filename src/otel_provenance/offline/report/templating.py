"""The one Jinja2 environment the HTML reports render with: built on the first render, then shared.

Why each setting:

- **Escaping.** Autoescape is on, and ``finalize`` escapes every interpolated value before it does,
  by the rule the pages have always followed: characters an HTML document may not hold (control
  characters, lone surrogates, non-characters) become U+FFFD, then ``html.escape(quote=True)``
  writes ``&quot;`` and ``&#x27;`` where MarkupSafe would write ``&#34;`` and ``&#39;`` — so a
  report's bytes did not change when its markup moved into templates. What ``finalize`` returns is
  ``Markup``, which autoescape lets through. The only ``Markup`` going in is what the templates'
  own macros rendered (a figure inside a page); the templates use no ``|safe``.
- **StrictUndefined.** A misspelt name fails the render instead of printing nothing in a report.
- **Layout.** A page template is written one output line a line: ``trim_blocks`` and
  ``lstrip_blocks`` make a block tag take no room, ``keep_trailing_newline`` ends the page with its
  newline. A ``.svg.j2`` template is one line of markup written over many: its line breaks, and the
  indentation after them, are removed before it is parsed (template layout, never a value).
- **Loaded from the package** (``templates/``, package data) by ``PackageLoader``, as installed.
- **Imported on first use.** Jinja2 comes with the ``cli`` extra. An application's base install
  never imports it, and a command line without it runs every command; ``--report-html`` then says
  what to install.
"""

from __future__ import annotations

import functools
import html
import re
from typing import TYPE_CHECKING, Final

from ...errors import ConfigurationError

if TYPE_CHECKING:
    from jinja2 import Environment

# Control characters (other than tab/newline) and lone surrogates are not valid in an HTML document.
_INVALID: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")
_SVG_LAYOUT: Final = re.compile(r"\n[ \t]*")
_MISSING: Final = "the HTML report needs Jinja2 (the cli extra): pip install 'otel-provenance[cli]'"


def escape_text(value: object) -> str:
    """``value`` as text that is safe in HTML/SVG content and in a quoted attribute value."""
    return html.escape(_INVALID.sub("\ufffd", str(value)), quote=True)


def render(template: str, **context: object) -> str:
    """The template ``template`` (a name under ``templates/``) rendered with ``context``."""
    return environment().get_template(template).render(**context)


def render_macro(template: str, macro: str, *args: object) -> str:
    """What the macro ``macro`` of ``template`` renders for ``args`` (a fragment the pages also use)."""
    return str(getattr(environment().get_template(template).module, macro)(*args))


@functools.cache
def environment() -> Environment:
    """The shared environment, built once (Jinja2 caches the parsed templates in it)."""
    try:
        import jinja2
        import jinja2.ext
        import markupsafe
    except ModuleNotFoundError as exc:
        raise ConfigurationError(f"{_MISSING} ({exc.name} is missing)") from None

    class OneLineSvg(jinja2.ext.Extension):
        """Joins the lines of a ``.svg.j2`` template: the figure is one line of markup."""

        def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
            return _SVG_LAYOUT.sub("", source) if name and name.endswith(".svg.j2") else source

    def finalize(value: object) -> markupsafe.Markup:
        if isinstance(value, markupsafe.Markup):  # a fragment a macro of these templates rendered
            return value
        return markupsafe.Markup(escape_text(value))

    return jinja2.Environment(
        loader=jinja2.PackageLoader(__name__.rpartition(".")[0], "templates"),
        autoescape=True,
        finalize=finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # the package's templates do not change under a running command
        extensions=[OneLineSvg],
    )
