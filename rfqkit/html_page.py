"""The one way the project's reports write a self-contained HTML page (the conformance suite's
``matrix.html``, a load run's ``report.html``): the document's frame, the styles they share,
and the escape everything shown goes through. No external asset: a page works offline and can
be attached to a CI run."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #111; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 4px 6px; vertical-align: top; text-align: left; }
th { background: #f3f3f3; }
pre { white-space: pre-wrap; }
"""


def e(value: object) -> str:
    """``value`` as text safe in an element or a quoted attribute."""
    return escape(str(value), quote=True)


def page(title: str, body: Sequence[str], *, style: str = "", script: str = "") -> str:
    """The whole document: ``body`` (already escaped markup) under the shared styles and the
    page's own ``style``; ``script`` (the page's own, inline) at its end."""
    parts = [
        "<!doctype html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{e(title)}</title>",
        f"<style>{STYLE}{style}</style></head><body>",
        *body,
    ]
    if script:
        parts.append(f"<script>{script}</script>")
    return "\n".join([*parts, "</body></html>", ""])
