"""The ramp's discovery surface: providers (fields, filters, live switches), payout banks (fields,
15-minute cache), account resolution, the sandbox flag, the per-IP backstop, an unreachable
provider, and the conventions every ramp answer follows (X-Request-Id, the error envelope, no
`data` wrapper).

Tests that change the provider's switches, reachability or config do it through
``/_sim/ramp/...`` inside ``Ramp.restoring()``, which puts everything back afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.calls.ramp import (
    CALL_BANKS,
    CALL_CREATE_CUSTOMER,
    CALL_RESOLVE,
    CHAIN,
    PROVIDER,
    Ramp,
    assert_providers,
    fresh_wallet,
)
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import (
    Client,
    Response,
    fresh_loopback_address,
    is_loopback_url,
    on_one_connection,
)
from conformance.wire.response_checks import (
    assert_error,
    assert_issues,
    assert_json_content_type,
    assert_no_rate_limit_headers,
    assert_request_id,
    assert_retry_after,
)


@pytest.fixture
def http(http: Client) -> Iterator[Client]:
    """One instance's per-IP backstop: conformance.wire.client `on_one_connection`."""
    yield from on_one_connection(http)


BANKS_CACHE_S = 15 * 60
GOOD_ACCOUNT = "0123456789"
FAILING_ACCOUNT = "0123450000"  # sandbox test value: ends with 0000


@pytest.fixture
def controlled(sim: SimControl, http: Client) -> Iterator[Ramp]:
    """The ramp with its provider's switches, reachability and config restored afterwards."""
    with Ramp(http, sim).restoring() as ramp:
        yield ramp


def ok(resp: Response) -> dict[str, Any]:
    """A ramp success: 200, JSON, X-Request-Id, the payload itself (no `data` wrapper)."""
    assert resp.status == 200, f"{resp.describe()}: {resp.raw[:500]!r}"
    assert_request_id(resp)
    assert_json_content_type(resp)
    body = resp.json()
    assert isinstance(body, dict), body
    assert "data" not in body, f"ramp bodies are not wrapped in data: {body!r}"
    assert "error" not in body, body
    return body


def the_provider(body: dict[str, Any]) -> dict[str, Any]:
    matches = [p for p in body["providers"] if p["provider"] == PROVIDER]
    assert len(matches) == 1, body
    return dict(matches[0])


def resolve(ramp: Ramp, account: str, **extra: Any) -> Response:
    body = {"provider": ramp.provider, "bankCode": "058", "accountNumber": account, **extra}
    return ramp.post("banks/resolve", body)


# -- providers -----------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/endpoints/get-v2-ramp-providers",
    "ramp/resources/provider/provider",
    "ramp/resources/provider/displayname",
    "ramp/resources/provider/fiat",
    "ramp/resources/provider/token",
    "ramp/resources/provider/chainids",
    "ramp/resources/provider/sandboxchainids",
    "ramp/resources/provider/sides",
    "ramp/resources/provider/requires-customerdetails",
    "ramp/resources/provider/requires-payoutbankaccount",
    "ramp/resources/provider/requires-destinationwallet",
    "ramp/auth/item-4",
    "ramp/overview/item-5",
    "ramp/overview/conventions",
)
def test_providers_fields_without_any_credential(ramp: Ramp) -> None:
    body = ok(ramp.providers())
    assert_providers(body)
    assert body["providers"], "the corridor is offered by default"
    provider = the_provider(body)
    assert (provider["fiat"], provider["token"]) == ("NGN", "NGNS")
    assert CHAIN in provider["chainIds"]


@pytest.mark.spec("ramp/endpoints/get-v2-ramp-providers", "ramp/errors/400-invalid_request")
@pytest.mark.parametrize(
    ("query", "listed"),
    [
        ({"fiat": "NGN"}, True),
        ({"fiat": "USD"}, False),
        ({"token": "NGNS"}, True),
        ({"token": "USDT"}, False),
        ({"chainId": CHAIN}, True),
        ({"chainId": 1}, False),
        ({"side": "buy"}, True),
        ({"side": "sell"}, True),
        ({"fiat": "NGN", "token": "NGNS", "chainId": CHAIN, "side": "buy"}, True),
    ],
)
def test_providers_filters(ramp: Ramp, query: dict[str, Any], listed: bool) -> None:
    body = ok(ramp.providers(**query))
    assert any(p["provider"] == PROVIDER for p in body["providers"]) is listed, (query, body)
    for item in body["providers"]:
        if "chainId" in query:
            assert query["chainId"] in item["chainIds"], item
        if "side" in query:
            assert query["side"] in item["sides"], item


@pytest.mark.spec("ramp/errors/400-invalid_request", "ramp/errors/envelope")
@pytest.mark.parametrize(
    ("query", "field"),
    [({"side": "both"}, "side"), ({"chainId": "ninety-seven"}, "chainId"), ({"x": "1"}, "x")],
)
def test_providers_bad_query_is_400(ramp: Ramp, query: dict[str, Any], field: str) -> None:
    assert_issues(assert_error(ramp.providers(**query), 400, "invalid_request"), field)


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "ramp/resources/provider/empty-list-means-nobody",
    "ramp/resources/provider/sides",
    "ramp/resources/provider/chainids",
    "ramp/versioning/provider-capabilities-chains-sides",
    "ramp/errors/403-forbidden",
)
def test_switches_change_the_list_at_once(controlled: Ramp) -> None:
    ramp = controlled
    ramp.switches(sides={"sell": False})
    provider = the_provider(ok(ramp.providers()))
    assert provider["sides"] == ["buy"]
    assert not any(p["provider"] == PROVIDER for p in ok(ramp.providers(side="sell"))["providers"])
    ramp.switches(sides={"sell": True}, chains=[56])
    provider = the_provider(ok(ramp.providers()))
    assert provider["chainIds"] == [56]
    assert not ok(ramp.providers(chainId=CHAIN, sandbox="false"))["providers"]
    ramp.switches(chains=[56, CHAIN], enabled=False)
    assert ok(ramp.providers())["providers"] == []
    # A switched-off provider looks like nobody, and is refused where it is named.
    assert_error(ramp.banks(), 403, "forbidden")
    assert_error(resolve(ramp, GOOD_ACCOUNT), 403, "forbidden")
    ramp.switches(enabled=True)
    assert the_provider(ok(ramp.providers()))["sides"] == ["buy", "sell"]


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(
    "ramp/errors/502-upstream_error",
    "ramp/errors/429-502-transient-400",
    "ramp/resources/provider/empty-list-means-nobody",
)
def test_unreachable_provider(controlled: Ramp) -> None:
    ramp = controlled
    ramp.set_reachable(False)
    assert ok(ramp.providers())["providers"] == []
    for resp in (
        ramp.banks(),
        resolve(ramp, GOOD_ACCOUNT),
        ramp.register(fresh_wallet()),
    ):
        assert_error(resp, 502, "upstream_error", "provider_unreachable")
    ramp.set_reachable(True)
    assert the_provider(ok(ramp.providers()))


# -- banks ---------------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/endpoints/get-v2-ramp-banks",
    "ramp/resources/bank/code-string-name-string",
    "ramp/auth/item-4",
)
def test_banks_fields(ramp: Ramp) -> None:
    banks = ok(ramp.banks())["banks"]
    assert banks
    for bank in banks:
        assert set(bank) == {"code", "name"}, bank
        assert isinstance(bank["code"], str)
        assert bank["code"]
        assert isinstance(bank["name"], str)
        assert bank["name"]
    assert len({b["code"] for b in banks}) == len(banks)


@pytest.mark.spec("ramp/errors/404-not_found", "ramp/errors/400-invalid_request")
def test_banks_errors(ramp: Ramp, http: Client) -> None:
    assert_error(ramp.banks(provider="no-such-provider"), 404, "not_found")
    missing = http.get("/v2/ramp/banks")
    assert_issues(assert_error(missing, 400, "invalid_request"), "provider")


@pytest.mark.sim_only(because="clock")
@pytest.mark.spec(
    "ramp/resources/bank/cached-service-side-15-minutes", "ramp/limits/banks-list-cache"
)
def test_banks_cached_fifteen_minutes(ramp: Ramp) -> None:
    ramp.advance(BANKS_CACHE_S + 1)  # whatever an earlier test cached has gone stale
    before = ramp.calls(CALL_BANKS)
    first = ok(ramp.banks())["banks"]
    assert ramp.calls(CALL_BANKS) == before + 1
    for _ in range(3):
        assert ok(ramp.banks())["banks"] == first
    ramp.advance(BANKS_CACHE_S - 60)
    assert ok(ramp.banks())["banks"] == first
    assert ramp.calls(CALL_BANKS) == before + 1, "served from the cache within 15 minutes"
    ramp.advance(61)
    assert ok(ramp.banks())["banks"] == first
    assert ramp.calls(CALL_BANKS) == before + 2, "re-read once 15 minutes have passed"


# -- resolve -------------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-banks-resolve",
    "ramp/resources/bank/resolve-result-accountname",
    "ramp/limits/accountnumber",
    "ramp/auth/item-4",
)
@pytest.mark.parametrize("account", ["012345", GOOD_ACCOUNT, "012345678901"])
def test_resolve_needs_no_wallet_or_proof(ramp: Ramp, account: str) -> None:
    body = ok(resolve(ramp, account))
    assert set(body) == {"accountName"}, body
    assert isinstance(body["accountName"], str)
    assert body["accountName"].strip()
    assert ok(resolve(ramp, account)) == body, "the same account resolves to the same name"


@pytest.mark.spec("ramp/limits/accountnumber", "ramp/errors/400-invalid_request")
@pytest.mark.parametrize(
    "account",
    ["01234", "0123456789012", "01234567a9", "", "\uff10\uff11\uff12\uff13\uff14\uff15\uff16"],
)
def test_resolve_account_number_is_6_to_12_digits(ramp: Ramp, account: str) -> None:
    assert_issues(assert_error(resolve(ramp, account), 400, "invalid_request"), "accountNumber")


@pytest.mark.spec("ramp/errors/400-invalid_request", "ramp/errors/404-not_found")
def test_resolve_unknown_bank_or_provider(ramp: Ramp) -> None:
    body = {"provider": ramp.provider, "bankCode": "999999", "accountNumber": GOOD_ACCOUNT}
    assert_issues(
        assert_error(ramp.post("banks/resolve", body), 400, "invalid_request"), "bankCode"
    )
    body = {"provider": "no-such-provider", "bankCode": "058", "accountNumber": GOOD_ACCOUNT}
    assert_error(ramp.post("banks/resolve", body), 404, "not_found")


@pytest.mark.sim_only(because="provider")
@pytest.mark.spec(
    "ramp/errors/422-provider_refused",
    "ramp/errors/code-stable-message-not",
    "ramp/errors/envelope",
)
def test_resolve_failing_account_is_provider_refused_with_its_sentence(ramp: Ramp) -> None:
    before = ramp.calls(CALL_RESOLVE)
    error = assert_error(resolve(ramp, FAILING_ACCOUNT), 422, "provider_refused")
    assert error["message"] == "We could not verify this bank account"
    assert ramp.calls(CALL_RESOLVE) == before + 1


# -- the sandbox flag ----------------------------------------------------------------------


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "ramp/overview/item-7",
    "ramp/endpoints/list-response-shape-where",
    "ramp/errors/403-forbidden",
    "ramp/resources/provider/sandboxchainids",
)
def test_sandbox_flag_in_staging(controlled: Ramp) -> None:
    ramp = controlled
    provider = the_provider(ok(ramp.providers()))
    assert provider["sandboxChainIds"] == [CHAIN]
    assert the_provider(ok(ramp.providers(sandbox="true", chainId=CHAIN)))
    assert ok(ramp.providers(sandbox="true", chainId=56))["providers"] == []
    assert ok(ramp.banks(sandbox="true"))["banks"]
    wallet = fresh_wallet()
    registered = ramp.post(
        "customers",
        ramp.wallet_body(
            wallet,
            sandbox=True,
            acceptedTerms=True,
            firstName="Ada",
            lastName="Obi",
            email="ada@example.com",
            phone="+2348012345678",
        ),
    )
    assert ok(registered)["customer"]["hasProviderCustomer"] is True
    # A sandbox request on a chain the test account does not cover is 403.
    live_only = Ramp(ramp.http, ramp.sim, chain_id=56)
    assert_error(
        live_only.post("customers/details", live_only.wallet_body(wallet, sandbox=True)),
        403,
        "forbidden",
        "sandbox_not_available",
    )
    ramp.switches(sandboxChains=[])
    assert ok(ramp.providers(sandbox="true"))["providers"] == []
    assert_error(ramp.banks(sandbox="true"), 403, "forbidden", "sandbox_not_available")
    assert_error(resolve(ramp, GOOD_ACCOUNT, sandbox=True), 403, "forbidden")


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "ramp/overview/item-7",
    "ramp/resources/provider/sandboxchainids",
    "ramp/errors/400-invalid_request",
)
def test_production_refuses_the_sandbox_flag(production: Client) -> None:
    ramp = Ramp(production, SimControl(production))
    provider = the_provider(ok(ramp.providers()))
    assert provider["sandboxChainIds"] == []
    wallet = fresh_wallet()
    before = ramp.calls(CALL_CREATE_CUSTOMER)
    refusals = (
        ramp.providers(sandbox="true"),
        ramp.banks(sandbox="true"),
        resolve(ramp, GOOD_ACCOUNT, sandbox=True),
        ramp.post("customers", ramp.wallet_body(wallet, sandbox=True, acceptedTerms=True)),
        ramp.post("customers/details", ramp.wallet_body(wallet, sandbox=True)),
    )
    for resp in refusals:
        assert_error(resp, 400, "invalid_request", "sandbox_not_allowed")
    assert ramp.calls(CALL_CREATE_CUSTOMER) == before
    assert ok(ramp.banks())["banks"], "without the flag production serves as usual"


# -- conventions ---------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/errors/envelope",
    "ramp/overview/conventions",
    "ramp/versioning/ramp-lives-only-under",
)
def test_every_ramp_answer_has_a_request_id_and_errors_the_envelope(
    ramp: Ramp, http: Client
) -> None:
    answers = [
        ramp.providers(),
        ramp.banks(),
        http.get("/v2/ramp/no-such-thing"),
        http.get("/v2/ramp/customers"),
        http.post(
            "/v2/ramp/customers", data=b"{not json", headers={"Content-Type": "application/json"}
        ),
        http.post("/v2/ramp/banks/resolve", data=b"{}", headers={"Content-Type": "text/plain"}),
        http.get("/ramp/providers"),
    ]
    ids = [assert_request_id(resp) for resp in answers]
    assert len(set(ids)) == len(ids), "one id per request"
    assert_error(answers[2], 404, "not_found")
    assert answers[3].status in (404, 405), "no read of a customer without proof (no GET)"
    assert_error(
        answers[3],
        answers[3].status,
        "not_found" if answers[3].status == 404 else "method_not_allowed",
    )
    assert_error(answers[4], 400, "invalid_request")
    assert_error(answers[5], 400, "invalid_request")
    assert_error(answers[6], 404, "not_found")


@pytest.fixture
def new_caller(target: Target, http: Client) -> Callable[[], Client]:
    if not is_loopback_url(target.base_url):
        pytest.skip("per-IP limits need a target on 127.0.0.0/8 to choose client IPs")
    return lambda: http.from_address(fresh_loopback_address())


@pytest.fixture
def backstop(sim: SimControl) -> Iterator[Callable[[int], None]]:
    original = sim.limits()

    def lower(per_minute: int) -> None:
        sim.set_limits(ip_backstop_per_minute=per_minute, reset_windows=True)

    try:
        yield lower
    finally:
        sim.set_limits(**original, reset_windows=True)


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/errors/429-rate_limited",
    "ramp/limits/rate-limit",
    "ramp/errors/429-502-transient-400",
    "ramp/overview/properties-that-must-hold/no-api-key-no",
)
def test_per_ip_backstop(
    sim: SimControl, backstop: Callable[[int], None], new_caller: Callable[[], Client]
) -> None:
    backstop(4)
    caller, neighbour = new_caller(), new_caller()
    ramp = Ramp(caller, sim)  # proofs on the service clock; /_sim calls are not counted
    wallet = fresh_wallet()
    answers = [
        ramp.providers(),
        ramp.banks(),
        ramp.post("customers/details", ramp.wallet_body(wallet)),
        resolve(ramp, GOOD_ACCOUNT),
    ]
    for resp in answers:
        assert resp.status == 200, resp
        assert_no_rate_limit_headers(resp)  # no key, no per-key limiter on the ramp
    for resp in (ramp.providers(), ramp.post("customers/details", ramp.wallet_body(wallet))):
        assert_error(resp, 429, "rate_limited")
        assert_retry_after(resp, 60)
        assert_no_rate_limit_headers(resp)
    # Another IP has its own budget, and an API key is simply not looked at on the ramp.
    keyed = neighbour.with_headers({"Authorization": "Bearer tx_test_notakey"})
    assert ok(Ramp(keyed, sim).providers())["providers"] is not None


@pytest.mark.sim_only(because="simulator")
def test_sim_ramp_names_the_sandbox_and_proxies_its_controls(ramp: Ramp, sim: SimControl) -> None:
    info = sim.call("GET", "ramp")
    assert info["provider"] == PROVIDER
    assert info["in_process"] is True
    assert str(info["url"]).startswith("http://127.0.0.1:")
    assert str(info["webhook_url"]).endswith(f"/_provider/{PROVIDER}/webhooks")
    state = ramp.state()
    assert state["webhooks"]["url"] == info["webhook_url"], "the sandbox calls this simulator"
    assert state["capabilities"]["provider"] == PROVIDER
    assert isinstance(state["calls"], dict)
    unknown = ramp.http.post("/_sim/ramp/transfers/rtr_nope/stall")
    assert_error(unknown, 404, "not_found")
    bad = ramp.http.request("PUT", "/_sim/ramp/switches", json={"chains": "all"})
    assert_issues(assert_error(bad, 400, "invalid_request"), "chains")
