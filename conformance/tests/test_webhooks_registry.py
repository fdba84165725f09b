"""The webhook registry, /v1/webhooks (shared by v1 and v2): shapes, the secret shown once,
ownership, https, event types, malformed bodies, scopes and bad keys.

Each test issues keys for a partner record of its own (``POST /_sim/keys``) and revokes them
afterwards (without control it uses the given webhooks keys, of one partner or another by their
``partner`` labels, and deletes what it registered); requests leave from a loopback address of
their own so the per-IP backstop of 127.0.0.1 is not shared with other tests. Registered URLs
point at ``example.com``: no event of these partners' test RFQs is expected, so nothing is
delivered there.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.calls.webhooks import NOWHERE
from conformance.checks.resource_checks import (
    RFQ_EVENTS,
    V1_EVENTS,
    assert_created_endpoint,
    assert_listed_endpoint,
)
from conformance.checks.stable_reads import KINDS, a_second_later, assert_stable, row_of
from conformance.deployment.key_source import KeySource
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import Client, fresh_loopback_address, is_loopback_url
from conformance.wire.response_checks import assert_data, assert_error, assert_issues

MINTED: list[str] = []  # URLs registered by the running test (one test at a time per process)

MANAGE = ("webhooks:manage",)

POST_RULES = (
    "rfq/endpoints/post-v1-webhooks",
    "rfq/resources/webhook-endpoint/fields",
    "v1/endpoints/post-get-delete-v1-webhooks-v1-webhooks-id",
)
SHARED_RULES = (
    "rfq/endpoints/webhook-registry-shared-all",
    "rfq/versioning/item-3",
    "v1/versioning/item-2",
    "v1/events/endpoints-registered-through-v1",
)

KeyFactory = Callable[..., dict[str, Any]]
AS_MADE = row_of("creation answer")  # a row of GET /v1/webhooks against POST's answer


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    """A client from a loopback address of its own (when the target allows); against a target
    without control the given key is shared with the other tests, so it waits out 429s."""
    own = http.from_address(fresh_loopback_address()) if is_loopback_url(target.base_url) else http
    return own if target.controllable else own.paced()


@pytest.fixture
def new_key(target: Target, caller: Client) -> Iterator[KeyFactory]:
    """Keys of this test's own partner (or a named one) through /_sim, revoked afterwards; the
    given webhooks key elsewhere, whose endpoints this test registered are deleted afterwards."""
    source = KeySource(target, "webhooks")
    given: list[dict[str, Any]] = []
    MINTED.clear()

    def make(scopes: tuple[str, ...] = MANAGE, **extra: Any) -> dict[str, Any]:
        record = source.make(extra.pop("environment", "test"), scopes, **extra)
        if not target.controllable:
            given.append(record)
        return record

    yield make
    source.close()
    for key in given:
        listed = caller.get("/v1/webhooks", headers=_auth(key))
        for endpoint in listed.body.get("data") or [] if listed.status == 200 else []:
            if endpoint.get("url") in MINTED:
                caller.delete(f"/v1/webhooks/{endpoint['id']}", headers=_auth(key))


def _auth(key: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def _url(label: str = "hook") -> str:
    url = f"{NOWHERE}/{label}-{secrets.token_hex(4)}"
    MINTED.append(url)
    return url


def _create(caller: Client, key: dict[str, Any], url: str, types: list[str]) -> dict[str, Any]:
    resp = caller.post("/v1/webhooks", json={"url": url, "eventTypes": types}, headers=_auth(key))
    data: dict[str, Any] = assert_data(resp, 201)
    return data


def _list(caller: Client, key: dict[str, Any]) -> list[dict[str, Any]]:
    data = assert_data(caller.get("/v1/webhooks", headers=_auth(key)))
    assert isinstance(data, list), f"GET /v1/webhooks data is not an array: {data!r}"
    return data


def _listed(caller: Client, key: dict[str, Any], endpoint_id: str) -> dict[str, Any]:
    """The row of GET /v1/webhooks naming the endpoint."""
    rows = [e for e in _list(caller, key) if e.get("id") == endpoint_id]
    assert len(rows) == 1, f"{endpoint_id} listed {len(rows)} times"
    assert_listed_endpoint(rows[0])
    return rows[0]


def _none_registered(caller: Client, key: dict[str, Any], *tried: Any) -> None:
    """Nothing this test tried to register (by URL or id) is listed. A key of the test's own
    partner (a simulator) must list nothing at all; a given key is shared with other tests,
    which may hold endpoints of their own meanwhile."""
    listed = _list(caller, key)
    if "key_id" in key:  # made through /_sim/keys for this test's own partner
        assert listed == [], listed
    mine = [e for e in listed if e.get("url") in tried or e.get("id") in tried]
    assert mine == [], mine


@pytest.mark.spec(
    *POST_RULES,
    *SHARED_RULES,
    "rfq/events/outbound-webhooks-partner-feature",
    "rfq/endpoints/get-v1-webhooks",
    *KINDS["webhook_endpoint"].rules,
)
def test_create_returns_the_endpoint_with_its_secret(caller: Client, new_key: KeyFactory) -> None:
    key = new_key()
    url = _url()
    created = _create(caller, key, url, ["rfq.filled", "rfq.expired"])
    assert_created_endpoint(created)
    assert created["url"] == url
    assert created["eventTypes"] == ["rfq.filled", "rfq.expired"]
    secret = created["signingSecret"]
    again = _create(caller, key, _url(), ["rfq.filled"])
    assert again["id"] != created["id"]
    assert again["signingSecret"] != secret
    # The secret is returned only at creation: the list shows the endpoint without it, and
    # otherwise as it was made, a second later too.
    row = _listed(caller, key, created["id"])
    listed_at = time.monotonic()
    assert_stable("webhook_endpoint", created["id"], created, row, what=AS_MADE)
    later = a_second_later(listed_at, "list row")
    row_again = _listed(caller, key, created["id"])
    assert_stable("webhook_endpoint", created["id"], row, row_again, what=later)


@pytest.mark.spec(
    "rfq/endpoints/get-v1-webhooks",
    "rfq/resources/webhook-endpoint/fields",
    "v1/endpoints/post-get-delete-v1-webhooks-v1-webhooks-id",
)
def test_list_shows_the_partners_endpoints_without_secrets(
    caller: Client, new_key: KeyFactory
) -> None:
    key = new_key()
    sibling = new_key(same_partner_as=key)
    stranger = new_key(other_partner_than=key)
    # A partner of the test's own lists exactly what the test made; a given key's partner may
    # hold endpoints of its own (and of other tests): only the test's are checked, in order.
    own = "key_id" in key
    if own:
        assert _list(caller, key) == []
    first = _create(caller, key, _url("a"), ["rfq.expired"])
    second = _create(caller, key, _url("b"), [*RFQ_EVENTS, *V1_EVENTS])
    made = [first["id"], second["id"]]

    def seen_by(other: dict[str, Any]) -> list[str]:
        ids = [e["id"] for e in _list(caller, other)]
        return ids if own else [i for i in ids if i in made]

    listed = _list(caller, key)
    assert seen_by(key) == made, listed
    for endpoint in listed:
        assert_listed_endpoint(endpoint)
    # Each row is the endpoint as it was made (without its secret).
    rows = {e["id"]: e for e in listed}
    for endpoint in (first, second):
        assert_stable(
            "webhook_endpoint", endpoint["id"], endpoint, rows[endpoint["id"]], what=AS_MADE
        )
    assert "whsec_" not in caller.get("/v1/webhooks", headers=_auth(key)).raw.decode()
    # Any key of the same partner sees the same endpoints.
    assert seen_by(sibling) == made
    # Another partner sees none of them.
    assert seen_by(stranger) == []


@pytest.mark.spec(
    "rfq/endpoints/delete-v1-webhooks-id",
    "v1/endpoints/post-get-delete-v1-webhooks-v1-webhooks-id",
    "v1/errors/404-not_found",
    "rfq/errors/envelope",
)
def test_delete_then_unknown_is_404(caller: Client, new_key: KeyFactory) -> None:
    key = new_key()
    created = _create(caller, key, _url(), ["rfq.failed"])
    deleted = assert_data(caller.delete(f"/v1/webhooks/{created['id']}", headers=_auth(key)))
    assert deleted == {"id": created["id"], "deleted": True}
    _none_registered(caller, key, created["id"])
    again = caller.delete(f"/v1/webhooks/{created['id']}", headers=_auth(key))
    assert_error(again, 404, "not_found")
    unknown = caller.delete("/v1/webhooks/whe_000000000000000000000000", headers=_auth(key))
    assert_error(unknown, 404, "not_found")


@pytest.mark.spec(
    "rfq/endpoints/delete-v1-webhooks-id",
    "rfq/auth/api-keys/key-gives-own-rate-limit",
    "v1/errors/404-not_found",
)
def test_another_partners_endpoint_cannot_be_deleted(caller: Client, new_key: KeyFactory) -> None:
    owner = new_key()
    stranger = new_key(other_partner_than=owner)
    created = _create(caller, owner, _url(), ["rfq.filled"])
    resp = caller.delete(f"/v1/webhooks/{created['id']}", headers=_auth(stranger))
    assert_error(resp, 404, "not_found")
    listed = [e["id"] for e in _list(caller, owner)]
    assert created["id"] in listed, "the endpoint must survive"
    if "key_id" in owner:  # the test's own partner: nothing else is listed
        assert listed == [created["id"]], listed


@pytest.mark.spec(
    "rfq/events/endpoint-urls-must-https",
    "v1/events/requires-webhooks-manage-url",
    "rfq/errors/400-invalid_request",
    "v1/errors/400-invalid_request",
)
@pytest.mark.parametrize("url", ["http://example.com/hook", "ftp://example.com/hook"])
def test_https_is_required(caller: Client, new_key: KeyFactory, url: str) -> None:
    key = new_key()
    resp = caller.post(
        "/v1/webhooks", json={"url": url, "eventTypes": ["rfq.filled"]}, headers=_auth(key)
    )
    assert_error(resp, 400, "invalid_request", reason="https_required")
    _none_registered(caller, key, url)


@pytest.mark.spec(
    "rfq/events/rfq-filled",
    "rfq/events/rfq-failed",
    "rfq/events/rfq-expired",
    "v1/events/v1-event-types-swap-filled",
    "rfq/endpoints/webhook-registry-shared-all",
)
def test_every_rfq_and_v1_event_type_is_accepted(caller: Client, new_key: KeyFactory) -> None:
    key = new_key()
    for event_type in [*RFQ_EVENTS, *V1_EVENTS]:
        assert _create(caller, key, _url(), [event_type])["eventTypes"] == [event_type]


@pytest.mark.spec(
    "rfq/errors/400-invalid_request",
    "rfq/errors/details-optional-either-issues",
    "v1/errors/400-invalid_request",
)
@pytest.mark.parametrize(
    "event_types",
    [["rfq.unknown"], ["rfq.filled", "RFQ.FILLED"], [], "rfq.filled", [7]],
    ids=["unknown", "wrong-case", "empty", "not-a-list", "not-strings"],
)
def test_bad_event_types_are_400_naming_the_field(
    caller: Client, new_key: KeyFactory, event_types: Any
) -> None:
    key = new_key()
    url = _url()
    resp = caller.post(
        "/v1/webhooks", json={"url": url, "eventTypes": event_types}, headers=_auth(key)
    )
    assert_issues(assert_error(resp, 400, "invalid_request"), "eventTypes")
    _none_registered(caller, key, url)


@pytest.mark.spec(
    "rfq/errors/400-invalid_request",
    "rfq/errors/details-optional-either-issues",
    "v1/errors/400-invalid_request",
)
def test_malformed_bodies_are_400(caller: Client, new_key: KeyFactory) -> None:
    key = new_key()
    headers = {**_auth(key), "Content-Type": "application/json"}
    assert_error(
        caller.post("/v1/webhooks", data=b'{"url": "https://x', headers=headers),
        400,
        "invalid_request",
    )
    missing = caller.post("/v1/webhooks", json={"eventTypes": ["rfq.filled"]}, headers=_auth(key))
    assert_issues(assert_error(missing, 400, "invalid_request"), "url")
    for url in ("not a url", "https://", 42):
        resp = caller.post(
            "/v1/webhooks", json={"url": url, "eventTypes": ["rfq.filled"]}, headers=_auth(key)
        )
        assert_error(resp, 400, "invalid_request")
    _none_registered(caller, key, "https://x", "not a url", "https://", 42)


@pytest.mark.spec(
    "v1/auth/webhooks-manage",
    "rfq/events/outbound-webhooks-partner-feature",
    "rfq/errors/403-forbidden",
    "v1/errors/403-forbidden",
)
def test_a_key_without_webhooks_manage_is_403(caller: Client, new_key: KeyFactory) -> None:
    trader = new_key(scopes=("trades:write", "trades:read"), exact=True)
    headers = _auth(trader)
    body = {"url": _url(), "eventTypes": ["rfq.filled"]}
    assert_error(caller.post("/v1/webhooks", json=body, headers=headers), 403, "forbidden")
    assert_error(caller.get("/v1/webhooks", headers=headers), 403, "forbidden")
    assert_error(caller.delete("/v1/webhooks/whe_x", headers=headers), 403, "forbidden")


@pytest.mark.sim_only  # a revoked key
@pytest.mark.spec(
    "rfq/auth/api-keys/revoked-suspended-unknown-malformed",
    "rfq/events/outbound-webhooks-partner-feature",
    "rfq/errors/401-unauthorized",
    "v1/errors/401-unauthorized",
)
def test_missing_or_bad_keys_are_401(caller: Client, new_key: KeyFactory, sim: SimControl) -> None:
    body = {"url": _url(), "eventTypes": ["rfq.filled"]}
    assert_error(caller.post("/v1/webhooks", json=body), 401, "unauthorized")
    assert_error(caller.get("/v1/webhooks"), 401, "unauthorized")
    bogus = {
        "Authorization": "Bearer tx_test_0123456789ab.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    }
    assert_error(caller.get("/v1/webhooks", headers=bogus), 401, "unauthorized")
    assert_error(caller.get("/v1/webhooks", headers={"X-API-Key": "nonsense"}), 401, "unauthorized")
    revoked = new_key()
    sim.call("POST", f"keys/{revoked['key_id']}/revoke")
    assert_error(caller.get("/v1/webhooks", headers=_auth(revoked)), 401, "unauthorized")
    assert_error(
        caller.post("/v1/webhooks", json=body, headers=_auth(revoked)), 401, "unauthorized"
    )
