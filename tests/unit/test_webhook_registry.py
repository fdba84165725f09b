"""The webhook registry's rules: https, event types, ownership, limits."""

from __future__ import annotations

import pytest

from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound
from simulator.randomness import RandomSource
from simulator.services.webhooks.registry import WEBHOOK_EVENT_TYPES, WebhookRegistry


def _registry(**kw: object) -> WebhookRegistry:
    return WebhookRegistry(Clock(), RandomSource(1), **kw)  # type: ignore[arg-type]


def test_create_gives_ids_secrets_and_dedupes_types() -> None:
    registry = _registry()
    endpoint = registry.create("ptn_a", "https://example.com/hook", ["rfq.filled", "rfq.filled"])
    assert endpoint.endpoint_id.startswith("whe_")
    assert endpoint.signing_secret.startswith("whsec_")
    assert len(endpoint.signing_secret) > 40
    assert endpoint.event_types == ("rfq.filled",)
    assert endpoint.status == "active"
    other = registry.create("ptn_a", "https://example.com/hook", ["rfq.filled"])
    assert other.signing_secret != endpoint.signing_secret
    assert "signing_secret" not in repr(endpoint)


def test_known_types_are_the_rfq_and_v1_events() -> None:
    assert set(WEBHOOK_EVENT_TYPES) == {
        "rfq.filled",
        "rfq.failed",
        "rfq.expired",
        "swap.filled",
        "limit_order.filled",
        "limit_order.expired",
        "limit_order.cancelled",
    }


@pytest.mark.parametrize("url", ["http://example.com/hook", "ftp://example.com/", "HTTP://x/"])
def test_https_is_required(url: str) -> None:
    with pytest.raises(InvalidRequest) as error:
        _registry().create("ptn_a", url, ["rfq.filled"])
    assert error.value.details is not None
    assert error.value.details["reason"] == "https_required"


def test_http_allowed_with_the_developer_flag() -> None:
    endpoint = _registry(allow_http=True).create("ptn_a", "http://127.0.0.1:9/h", ["rfq.failed"])
    assert endpoint.url == "http://127.0.0.1:9/h"


@pytest.mark.parametrize("url", ["", "example.com/hook", "https://", "https://host:99999/"])
def test_urls_without_a_host_are_invalid(url: str) -> None:
    with pytest.raises(InvalidRequest) as error:
        _registry().create("ptn_a", url, ["rfq.filled"])
    assert error.value.details == {"reason": "invalid_url"}


@pytest.mark.parametrize("types", [[], ["rfq.nope"], ["rfq.filled", "RFQ.FILLED"]])
def test_event_types_must_be_known_and_present(types: list[str]) -> None:
    with pytest.raises(InvalidRequest) as error:
        _registry().create("ptn_a", "https://example.com/", types)
    assert error.value.details is not None
    assert error.value.details["issues"][0]["field"] == "eventTypes"


def test_endpoints_belong_to_their_partner() -> None:
    registry = _registry()
    mine = registry.create("ptn_a", "https://a.example/", ["rfq.filled"])
    theirs = registry.create("ptn_b", "https://b.example/", ["rfq.filled"])
    assert registry.owned_by("ptn_a") == [mine]
    with pytest.raises(NotFound):
        registry.delete("ptn_a", theirs.endpoint_id)
    with pytest.raises(NotFound):
        registry.delete("ptn_a", "whe_unknown")
    assert registry.delete("ptn_a", mine.endpoint_id) is mine
    assert registry.owned_by("ptn_a") == []
    with pytest.raises(NotFound):
        registry.delete("ptn_a", mine.endpoint_id)
    assert registry.owned_by("ptn_b") == [theirs]


def test_subscribed_filters_partner_and_type() -> None:
    registry = _registry()
    filled = registry.create("ptn_a", "https://a.example/1", ["rfq.filled"])
    both = registry.create("ptn_a", "https://a.example/2", ["rfq.expired", "rfq.filled"])
    registry.create("ptn_b", "https://b.example/", ["rfq.filled", "rfq.expired"])
    assert registry.subscribed("ptn_a", "rfq.filled") == [filled, both]
    assert registry.subscribed("ptn_a", "rfq.expired") == [both]
    assert registry.subscribed("ptn_a", "rfq.failed") == []
    assert registry.subscribed(None, "rfq.filled") == []


def test_endpoint_limit_per_partner() -> None:
    registry = _registry(max_per_partner=2)
    for _ in range(2):
        registry.create("ptn_a", "https://a.example/", ["rfq.filled"])
    with pytest.raises(InvalidRequest) as error:
        registry.create("ptn_a", "https://a.example/", ["rfq.filled"])
    assert error.value.details == {"reason": "endpoint_limit", "limit": 2}
    registry.create("ptn_b", "https://b.example/", ["rfq.filled"])
