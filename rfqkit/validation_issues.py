"""The error envelope's `details.issues` from a pydantic ValidationError: one entry per problem
with its dotted `field`, its `loc`, pydantic's `message` and `type` (no documentation URLs).
Shared by the simulator's request parsing and the maker fleet's control channel, which must
report a refused maker configuration exactly as the simulator reports a refused body."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


def issues_from(error: ValidationError) -> list[dict[str, Any]]:
    issues = []
    for item in error.errors(include_url=False):
        loc = [part if isinstance(part, int) else str(part) for part in item["loc"]]
        issues.append(
            {
                "field": ".".join(str(part) for part in loc),
                "loc": loc,
                "message": item["msg"],
                "type": item["type"],
            }
        )
    return issues
