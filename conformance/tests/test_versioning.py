"""Versioning (spec 1-rfq-v2 "Versioning"): v1 is closed to new integrations but stays served and
gets no new features; no deprecation or sunset dates are announced (decisions F14).

"No new features under /v1" is checked on the v2 features themselves: the RFQ API, the price
ladder, the maker stream and the fiat ramp answer only under /v2, and the v2 document lists no
/v1 path other than the webhook registry that both versions share.
"""

from __future__ import annotations

import secrets

import pytest

from conformance.deployment.sim_control import SimControl
from conformance.wire.client import Client, Response
from conformance.wire.response_checks import assert_data, assert_error

CHAIN = 97

# Each v2 feature, moved under /v1: (method, v2 path, body).
V2_FEATURES: list[tuple[str, str, dict[str, object] | None]] = [
    ("POST", "/v2/rfq/preview", {"chainId": CHAIN}),
    ("POST", "/v2/rfq/request", {"chainId": CHAIN}),
    ("GET", "/v2/rfq/levels?chainId=97", None),
    ("GET", "/v2/rfq/rfq_000000000000000000000000", None),
    ("POST", "/v2/rfq/rfq_000000000000000000000000/cancel", None),
    ("POST", "/v2/rfq/rfq_000000000000000000000000/submit", {"txHash": "0x" + "00" * 32}),
    ("GET", "/v2/maker/stream", None),
    ("GET", "/v2/ramp/providers", None),
]


def _send(http: Client, method: str, path: str, body: dict[str, object] | None) -> Response:
    return http.request(method, path, json=body) if body is not None else http.request(method, path)


@pytest.mark.spec("rfq/versioning/item-2", "rfq/versioning/item-1")
def test_v1_stays_served_without_the_v2_features(http: Client) -> None:
    # Stays served.
    health = assert_data(http.get("/v1/health"))
    assert health["status"] == "ok", health
    # Gets no new features: none of v2's endpoints exists under /v1.
    for method, v2_path, body in V2_FEATURES:
        v1_path = "/v1/" + v2_path.removeprefix("/v2/")
        assert_error(_send(http, method, v1_path, body), 404, "not_found")
    # The v2 document describes v2, plus the registry that both versions share (item 3).
    document = http.get("/v2/openapi.json").json()
    v1_paths = sorted(p for p in document["paths"] if p.startswith("/v1/"))
    assert v1_paths == ["/v1/webhooks", "/v1/webhooks/{endpoint_id}"], v1_paths
    assert all(p.startswith(("/v2/", "/v1/webhooks")) for p in document["paths"]), sorted(
        document["paths"]
    )


@pytest.mark.sim_only(because="decision")
@pytest.mark.spec("rfq/versioning/deprecation-or-sunset-dates", "rfq/versioning/item-2")
def test_no_deprecation_or_sunset_is_announced(http: Client, sim: SimControl) -> None:
    # decisions F14: no dates are announced, so no response carries the Deprecation (RFC 9745)
    # or Sunset (RFC 8594) header, on v1 or on v2, nor a Link to a deprecation policy.
    key = sim.create_key(
        f"conformance-versioning-{secrets.token_hex(6)}", "test", ["webhooks:manage"]
    )
    keyed = http.with_headers({"Authorization": f"Bearer {key['key']}"})
    responses = {
        "GET /v1/health": http.get("/v1/health"),
        "GET /v1/webhooks": keyed.get("/v1/webhooks"),
        "GET /v2/health": http.get("/v2/health"),
        "GET /v2/rfq/levels": http.get("/v2/rfq/levels", params={"chainId": CHAIN}),
        "GET /v1/nothing-here": http.get("/v1/nothing-here"),
    }
    try:
        for name, resp in responses.items():
            assert resp.status in (200, 404), f"{name}: {resp.describe()}"
            for header in ("Deprecation", "Sunset"):
                assert header not in resp.headers, f"{name} carries {header}: {resp.headers}"
            links = " ".join(resp.headers.get_all("Link")).lower()
            for word in ("deprecation", "sunset"):
                assert word not in links, f"{name}: Link {links}"
    finally:
        sim.call("POST", f"keys/{key['key_id']}/revoke")
