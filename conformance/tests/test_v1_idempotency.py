"""Idempotency-Key on v1 POSTs that create (spec 3 "Endpoints": "a retry with the same key
replays the first response"), on POST /v1/webhooks, the creating POST v1 shares with v2. Our
rules (docs/decisions.md V9-V14): replayed byte for byte; scoped to the API key and
the path; another body under the key is 400 ``idempotency_key_reused``; the key while the first
request is in flight is 409 ``idempotency_key_in_flight``; requests that were not carried out
(validation failures) are not stored; kept 24 h on the service clock.

Parallel requests are real: threads racing one key, and a request held in flight by a body that
is still uploading. Each test registers webhooks for a partner of its own, so the endpoint list
tells how many registrations really ran.

Without control (the given webhooks key, shared: the endpoints a test adds are told apart from
those already there, and deleted afterwards) only the spec's rule runs: a retry replays the
first response (the same endpoint, its secret, one creation, also under parallel retries). The
rest is rfqsim's (V9-V14) or needs its clock and its in-flight probe.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from conformance.calls.v1_calls import (
    UploadingRequest,
    V1Keys,
    bearer,
    own_address_client,
    v1_keys,
    webhook_body,
)
from conformance.calls.webhooks import NOWHERE
from conformance.checks.stable_reads import KINDS, REPLAY, assert_stable
from conformance.deployment.sim_control import (
    SimControl,
)
from conformance.deployment.target import Target
from conformance.wire.chain import wait_for
from conformance.wire.client import (
    Client,
    Response,
)
from conformance.wire.response_checks import (
    assert_data,
    assert_error,
)

RULES = (
    "v1/endpoints/every-post-creates-may",
    "v1/endpoints/post-get-delete-v1-webhooks-v1-webhooks-id",
)
DAY_S = 86_400


@pytest.fixture
def keys(target: Target) -> Iterator[V1Keys]:
    with v1_keys(target) as issued:
        yield issued


@pytest.fixture
def caller(target: Target, http: Client) -> Iterator[Client]:
    """A client IP of the test's own; without control paced, and the webhook endpoints the
    test added to the shared partner are deleted afterwards."""
    client = own_address_client(target, http)
    if target.controllable:
        yield client
        return
    client = client.paced()
    key = V1Keys(target).key("webhooks:manage")
    before = set(_registered(client, key))
    yield client
    for endpoint_id in set(_registered(client, key)) - before:
        client.delete(f"/v1/webhooks/{endpoint_id}", headers=bearer(key))


def _register(caller: Client, key: dict[str, Any], body: Any, idem: str | None) -> Response:
    headers = {**bearer(key), **({"Idempotency-Key": idem} if idem is not None else {})}
    return caller.post("/v1/webhooks", json=body, headers=headers)


def _registered(caller: Client, key: dict[str, Any]) -> list[str]:
    return [str(e["id"]) for e in assert_data(caller.get("/v1/webhooks", headers=bearer(key)))]


def _added(caller: Client, key: dict[str, Any], before: list[str]) -> list[str]:
    return [i for i in _registered(caller, key) if i not in before]


def _idem() -> str:
    return f"conformance-{secrets.token_hex(8)}"


@pytest.mark.spec(*RULES, *KINDS["webhook_endpoint"].rules)
@pytest.mark.needs("key:webhooks")
def test_a_retry_replays_the_first_response_byte_for_byte(
    caller: Client, keys: V1Keys, target: Target
) -> None:
    key = keys.key("webhooks:manage")
    before = _registered(caller, key)
    assert before == [] or not target.controllable, "a fresh partner has no endpoint"
    idem, body = _idem(), webhook_body()
    first = _register(caller, key, body, idem)
    created = assert_data(first, 201)
    retries = [_register(caller, key, body, idem) for _ in range(3)]
    for retry in retries:
        assert retry.status == 201, retry
        assert_stable(
            "webhook_endpoint", created["id"], created, assert_data(retry, 201), what=REPLAY
        )
        if target.controllable:  # byte for byte: rfqsim's (V9)
            assert retry.raw == first.raw, "a replay is the first response, byte for byte"
            assert retry.headers.get("Content-Type") == first.headers.get("Content-Type")
    # The signing secret, shown once, is in the replay too: the retry is the lost response.
    assert assert_data(retries[0], 201)["signingSecret"] == created["signingSecret"]
    assert _added(caller, key, before) == [created["id"]]
    # Without the header a POST creates every time.
    assert_data(_register(caller, key, body, None), 201)
    assert_data(_register(caller, key, body, None), 201)
    assert len(_added(caller, key, before)) == 3


@pytest.mark.spec(*RULES, "v1/errors/400-invalid_request")
@pytest.mark.sim_only(because="decision")  # docs/decisions.md V9-V14
def test_another_body_under_the_same_key_is_400(caller: Client, keys: V1Keys) -> None:
    key = keys.key("webhooks:manage")
    idem = _idem()
    created = assert_data(_register(caller, key, webhook_body("a"), idem), 201)
    for other in (webhook_body("b"), webhook_body("a", ["limit_order.filled"])):
        resp = _register(caller, key, other, idem)
        assert_error(resp, 400, "invalid_request", reason="idempotency_key_reused")
    assert _registered(caller, key) == [created["id"]]


@pytest.mark.spec(*RULES)
@pytest.mark.sim_only(because="decision")  # docs/decisions.md V9-V14
def test_keys_are_scoped_to_the_api_key(caller: Client, keys: V1Keys) -> None:
    first, second = keys.key("webhooks:manage"), keys.key("webhooks:manage")  # one partner
    idem = _idem()
    one = assert_data(_register(caller, first, webhook_body("a"), idem), 201)
    two = assert_data(_register(caller, second, webhook_body("b"), idem), 201)
    assert one["id"] != two["id"]
    assert sorted(_registered(caller, first)) == sorted([one["id"], two["id"]])


@pytest.mark.spec(*RULES, "v1/errors/400-invalid_request")
@pytest.mark.sim_only(because="decision")  # docs/decisions.md V9-V14
def test_validation_failures_are_not_stored(caller: Client, keys: V1Keys) -> None:
    key = keys.key("webhooks:manage")
    idem = _idem()
    insecure = {**webhook_body(), "url": "http://example.com/conformance/v1/insecure"}
    assert_error(_register(caller, key, insecure, idem), 400, "invalid_request", "https_required")
    malformed = _register(caller, key, {"url": f"{NOWHERE}/x"}, idem)
    assert_error(malformed, 400, "invalid_request")
    # Nothing was stored: the corrected request runs under the same key, and is then replayed.
    body = webhook_body()
    created = _register(caller, key, body, idem)
    assert_data(created, 201)
    assert _register(caller, key, body, idem).raw == created.raw
    assert len(_registered(caller, key)) == 1


@pytest.mark.spec(*RULES)
@pytest.mark.needs("sim_control")
def test_the_key_is_409_while_the_first_request_is_in_flight(
    sim: SimControl, caller: Client, keys: V1Keys
) -> None:
    key = keys.key("webhooks:manage")
    idem, body = _idem(), webhook_body()
    uploading = UploadingRequest(
        caller, "/v1/webhooks", body, {**bearer(key), "Idempotency-Key": idem}
    )
    try:

        def in_flight() -> bool | None:
            records = sim.call("GET", "idempotency")["records"]
            mine = [r for r in records if r["key"] == idem]
            return True if mine and mine[0]["state"] == "in_flight" else None

        wait_for(in_flight, what="the first request to be in flight")
        for other_body in (body, webhook_body("other")):
            resp = _register(caller, key, other_body, idem)
            assert_error(resp, 409, "conflict", reason="idempotency_key_in_flight")
        assert _registered(caller, key) == []
        first = uploading.finish()
    finally:
        uploading.abandon()
    created = assert_data(first, 201)
    assert _register(caller, key, body, idem).raw == first.raw
    assert _registered(caller, key) == [created["id"]]


@pytest.mark.spec(*RULES)
@pytest.mark.needs("key:webhooks")
def test_parallel_requests_with_one_key_create_once(
    caller: Client, keys: V1Keys, target: Target
) -> None:
    key = keys.key("webhooks:manage")
    before = _registered(caller, key)
    mine = target.controllable
    idem, body = _idem(), webhook_body()
    parallel = 16
    start = threading.Barrier(parallel)

    def send(_: int) -> Response:
        start.wait(timeout=30)
        return _register(caller, key, body, idem)

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        answers = list(pool.map(send, range(parallel)))
    created = [r for r in answers if r.status == 201]
    assert created, [r.describe() for r in answers]
    assert len({assert_data(r, 201)["id"] for r in created}) == 1, "one creation, replayed"
    # A replay is the first response: the secret shown once is the first answer's in each.
    secrets_shown = {assert_data(r, 201)["signingSecret"] for r in created}
    assert len(secrets_shown) == 1, "the replays carry another signing secret"
    assert not mine or len({r.raw for r in created}) == 1, "replayed byte for byte"
    for resp in answers:
        if resp.status == 201:
            continue
        if mine:
            assert_error(resp, 409, "conflict", "idempotency_key_in_flight")
        else:  # the spec leaves a concurrent retry's answer open: an error, in the envelope
            assert resp.status >= 400, resp.describe()
            assert isinstance((resp.json() or {}).get("error"), dict), resp.describe()
    assert _added(caller, key, before) == [assert_data(created[0], 201)["id"]]


@pytest.mark.spec(*RULES)
@pytest.mark.sim_only(because="clock")
def test_keys_are_kept_24_hours_of_service_time(
    sim: SimControl, caller: Client, keys: V1Keys
) -> None:
    key = keys.key("webhooks:manage")
    idem, body = _idem(), webhook_body()
    first = _register(caller, key, body, idem)
    created = assert_data(first, 201)
    sim.advance(DAY_S - 60)
    assert _register(caller, key, body, idem).raw == first.raw
    sim.advance(60)
    again = assert_data(_register(caller, key, body, idem), 201)
    assert again["id"] != created["id"], "after 24 h the key is new: the POST runs again"
    assert sorted(_registered(caller, key)) == sorted([created["id"], again["id"]])


@pytest.mark.spec(*RULES, "v1/errors/400-invalid_request")
@pytest.mark.parametrize("value", ["x" * 256, "caf\u00e9"], ids=["too-long", "not-ascii"])
@pytest.mark.sim_only(because="decision")  # docs/decisions.md V9-V14
def test_a_malformed_key_is_400(caller: Client, keys: V1Keys, value: str) -> None:
    key = keys.key("webhooks:manage")
    raw_headers = {**bearer(key), "Idempotency-Key": value}
    resp = caller.post("/v1/webhooks", json=webhook_body(), headers=raw_headers)
    assert_error(resp, 400, "invalid_request", reason="idempotency_key_invalid")
    assert _registered(caller, key) == []
