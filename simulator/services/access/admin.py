"""Administration of the access area through the control API (/_sim/keys, /_sim/limits): rules a
handler must not hold — a key's tier must exist, a partner is found or made by name, new limits
are validated whole before they replace the old ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from rfqkit.validation_issues import issues_from
from simulator.errors import InvalidRequest
from simulator.services.access.area import AccessArea
from simulator.services.access.keys import ApiKey, KeyEnvironment
from simulator.settings import LimitSettings


def create_key(
    area: AccessArea,
    *,
    partner: str,
    environment: KeyEnvironment,
    scopes: frozenset[str],
    name: str,
    tier: str,
    maker_wallet: str | None,
) -> tuple[ApiKey, str]:
    """A new key of `partner` (made on first use); returns the record and the full key, which
    exists only in this answer (the simulator keeps a hash)."""
    if tier not in area.limits.tiers:
        raise InvalidRequest(
            f"Unknown tier {tier}",
            details={"reason": "unknown_tier", "tiers": sorted(area.limits.tiers)},
        )
    owner = area.keys.partner_by_name(partner)
    return area.keys.create_key(
        partner_id=owner.partner_id,
        environment=environment,
        scopes=scopes,
        name=name,
        tier=tier,
        maker_wallet=maker_wallet,
    )


def replace_limits(
    area: AccessArea, update: Mapping[str, Any], *, reset_windows: bool
) -> LimitSettings:
    """The limits in force with `update` merged in (a tier named in `update` is added or
    changed, the others stay), validated whole: limits that break a rule are refused with
    `details.issues` and nothing changes; `reset_windows` also empties the per-key windows."""
    merged = {**area.limits.model_dump(), **update}
    merged["tiers"] = {**area.limits.tiers, **update.get("tiers", {})}
    try:
        area.limits = LimitSettings.model_validate(merged)
    except ValidationError as exc:
        raise InvalidRequest(
            "Limits failed validation", details={"issues": issues_from(exc)}
        ) from exc
    if reset_windows:
        area.limiter.reset()
    return area.limits
