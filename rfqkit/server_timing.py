"""Reading the simulator's `Server-Timing` header on the client side:
the bench and the load harness both take `sim` (time inside the simulator) and `makers` (the
auction's wait for makers) from it."""

from __future__ import annotations


def server_timing(header: str | None) -> dict[str, float]:
    """``sim;dur=4.3, makers;dur=1.2`` -> ``{"sim": 4.3, "makers": 1.2}``; entries without a
    numeric ``dur`` are skipped."""
    metrics: dict[str, float] = {}
    for entry in (header or "").split(","):
        name, *params = (part.strip() for part in entry.split(";"))
        for param in params:
            if param.startswith("dur="):
                try:
                    metrics[name] = float(param[4:])
                except ValueError:
                    continue
    return metrics
