"""Reading the simulator's `Server-Timing` header on the client side:
the bench and the load harness both take `sim` (time inside the simulator) and `makers` (the
auction's wait for makers) from it, and the load harness each maker's own wait (`maker`
entries, one per maker asked, named by `desc`)."""

from __future__ import annotations

import re

# One metric: its name, then `;param=value` pairs (a value a token or a quoted string, in which
# a comma does not end the metric).
_METRIC = re.compile(
    r'\s*([^\s;,=]+)((?:\s*;\s*[^\s;,=]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^\s;,"]*))?)*)\s*(?:,|$)'
)
_PARAM = re.compile(r'\s*;\s*([^\s;,=]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^\s;,"]*))?')
MAKER = "maker"  # a maker's own wait: `maker;dur=<ms>;desc="<name>"`


def _metrics(header: str | None) -> list[tuple[str, dict[str, str]]]:
    found = []
    for match in _METRIC.finditer(header or ""):
        if not match.group(1):
            continue
        params = {}
        for param in _PARAM.finditer(match.group(2)):
            value = param.group(2) or ""
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            params[param.group(1).lower()] = value
        found.append((match.group(1), params))
    return found


def _dur(params: dict[str, str]) -> float | None:
    try:
        return float(params["dur"])
    except (KeyError, ValueError):
        return None


def server_timing(header: str | None) -> dict[str, float]:
    """``sim;dur=4.3, makers;dur=1.2`` -> ``{"sim": 4.3, "makers": 1.2}``; entries without a
    numeric ``dur`` and the per-maker ``maker`` entries (:func:`maker_waits`) are skipped."""
    metrics: dict[str, float] = {}
    for name, params in _metrics(header):
        dur = _dur(params)
        if dur is not None and name != MAKER:
            metrics[name] = dur
    return metrics


def maker_waits(header: str | None) -> dict[str, float]:
    """Each asked maker's wait in milliseconds, by name: ``maker;dur=2.1;desc="alpha",
    maker;dur=388;desc="delta"`` -> ``{"alpha": 2.1, "delta": 388.0}``."""
    waits: dict[str, float] = {}
    for name, params in _metrics(header):
        dur = _dur(params)
        if name == MAKER and dur is not None and params.get("desc"):
            waits[params["desc"]] = dur
    return waits


def maker_wait_entry(maker: str, ms: float) -> str:
    """The Server-Timing entry of one maker's wait (the name as a quoted string)."""
    quoted = maker.replace("\\", "\\\\").replace('"', '\\"')
    return f'{MAKER};dur={ms:.3f};desc="{quoted}"'
