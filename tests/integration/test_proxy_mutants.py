"""The passive mutation score of `rfqsim proxy`: the project's mutation proxy
(conformance/mutants) breaks the spec one way at a time in front of a real `rfqsim serve`, the
watching proxy sits in front of it, and one pass of scripted client traffic
(tests/integration/proxy_traffic.py) goes through both. Each mutation the traffic exercised (it
changed at least one answer) must be flagged with the rule id it breaks, but for the ones a
passive observer cannot see (MISSED, with the reason docs/conformance.md gives); the changes the
spec allows (the catalogue's equivalent mutations) and the unmutated run must be flagged with
nothing on the service's side."""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.calls.rfq_calls import execute_quote
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import Venue
from conformance.mutants.catalogue import all_mutations
from conformance.mutants.mutations import Exchange as MutatedExchange
from conformance.mutants.mutations import Mutation
from conformance.mutants.proxy import running_proxy
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from rfqsim.proxy.running import Options, Proxy
from tests.integration.proxy_traffic import CHAIN, Traffic
from tests.integration.serve_process import Served, serve

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    # The mutation proxy runs in this process: aiohttp's advice on relaying the 1 MiB probe
    # body as bytes is no error of the proxy under test.
    pytest.mark.filterwarnings("ignore:Sending a large body directly:ResourceWarning"),
]

REQUEST_ID = frozenset(
    {"rfq/overview/conventions/every-response-carries-x-request-id", "ramp/overview/conventions"}
)
ENVELOPE = frozenset(
    {"rfq/errors/envelope", "ramp/errors/envelope", "v1/errors/same-envelope-document-1"}
)
# Each mutation: the rule ids any one of which flags it (the spec line it breaks).
CAUGHT: dict[str, frozenset[str]] = {
    "drop_request_id": REQUEST_ID,
    "claim_wrong_token_403": frozenset({"rfq/errors/404-not_found"}),
    "no_retry_after_on_429": frozenset(
        {
            "rfq/limits/retry-after-set-two-time-window",
            "rfq/limits/per-ip-ceiling-before-authentication",
        }
    ),
    "taker_pays_over_cap": frozenset({"rfq/resources/firm-quote/quote-fields/takerpays"}),
    "released_renamed": frozenset({"rfq/states/cancel-response-reports-status"}),
    "firm_request_201": frozenset({"rfq/endpoints/post-v2-rfq-request"}),
    "ramp_status_backwards": frozenset({"ramp/states/transfer-status/rules"}),
    "error_text_plain": ENVELOPE,
    "error_request_id_mismatch": frozenset(
        {"rfq/errors/request_id-equals-x-request-id-header", *ENVELOPE}
    ),
    "unknown_path_400": frozenset({"rfq/errors/404-not_found"}),
    "method_405_without_allow": frozenset({"rfq/errors/envelope"}),
    "validation_without_issues": frozenset({"rfq/errors/details-optional-either-issues"}),
    "no_ratelimit_headers": frozenset({"rfq/limits/rate-limit-headers-responses-handled"}),
    "unknown_key_403": frozenset({"rfq/auth/api-keys/revoked-suspended-unknown-malformed"}),
    "ratelimit_headers_on_401": frozenset({"rfq/limits/absent-responses-rejected-earlier"}),
    "health_time_not_utc": frozenset({"rfq/overview/conventions/timestamps-iso-8601-utc-except"}),
    "amount_as_number": frozenset({"rfq/overview/conventions/amounts-base-10-strings-atomic"}),
    "quote_expires_beyond_ttl": frozenset(
        {"rfq/resources/firm-quote/quote-fields/expiresat", "rfq/limits/quote-ttl"}
    ),
    "ladder_levels_reversed": frozenset({"rfq/resources/price-ladder/up-nine-indicative-points"}),
    "ladder_stale_asof": frozenset({"rfq/resources/price-ladder/ladder-cached-about-2"}),
    "ladder_one_direction": frozenset({"rfq/resources/price-ladder/every-pair-chain-appears"}),
    "swap_value_nonzero": frozenset({"rfq/resources/firm-quote/unsigned-transaction-shape"}),
    "approval_wrong_chain": frozenset({"rfq/resources/firm-quote/unsigned-transaction-shape"}),
    "firm_without_claim_token": frozenset({"rfq/resources/firm-quote/claimtoken"}),
    "record_leaks_claim_token": frozenset(
        {"rfq/resources/rfq-record/signed-order-signature-claim"}
    ),
    "record_status_uppercase": frozenset({"rfq/resources/rfq-record/status"}),
    "fee_outside_taker_pays": frozenset(
        {
            "rfq/resources/firm-quote/quote-fields/takerpays",
            "rfq/resources/firm-quote/quote-fields/feeamount",
        }
    ),
    "no_quote_reason_renamed": frozenset({"rfq/resources/no-quote/fields"}),
    "submit_bad_hash_accepted": frozenset({"rfq/errors/400-invalid_request"}),
    "cancel_conflict_as_200": frozenset({"rfq/states/rule-1"}),
    "feed_timestamp_ms": frozenset({"v1/feed/get-historical_trades/response-buy-sell-newest"}),
    "feed_tickers_wrapped": frozenset(
        {"v1/feed/get-tickers/response-array-ticker_id-base_currency"}
    ),
    "webhook_list_shows_secret": frozenset({"rfq/endpoints/get-v1-webhooks"}),
    "stale_proof_as_invalid": frozenset({"rfq/auth/proof-of-control/rule-6"}),
    "feed_error_envelope": frozenset({"v1/errors/rates-feed-errors/body-error-string-400"}),
    "openapi_without_errors": frozenset({"rfq/endpoints/get-v2-openapi-json"}),
    "ratelimit_remaining_constant": frozenset({"rfq/limits/rate-limit-headers-responses-handled"}),
    "ramp_providers_unwrapped": frozenset({"ramp/endpoints/get-v2-ramp-providers"}),
    "feed_trades_oldest_first": frozenset(
        {"v1/feed/get-historical_trades/response-buy-sell-newest"}
    ),
    "feed_ticker_sides_inverted": frozenset({"v1/feed/get-tickers/bid-and-ask"}),
    "rfq_created_at_moves": frozenset({"rfq/resources/rfq-record/createdat"}),
}
# What a passive observer cannot see (docs/conformance.md "The watching proxy's mutation score").
MISSED = {
    "no_quote_as_400": "a 400 invalid_request without details for a well-formed request: the "
    "spec's 400s include refusals whose cause the observer cannot see (the taker's balance, a "
    "corridor's minimum or BOOK mode, the key's environment), and details is optional",
    "payload_413_as_400": "the spec sets no body size, so 400 invalid_request is a valid refusal "
    "of a body of over 1 MiB (here the suite's own probe, which also lacks every field and so "
    "breaks rules a refusal may name by a reason); 413 payload_too_large is HTTP's and "
    "rfqsim's convention the suite holds it to",
}


class ProxyThread:
    """The watching proxy (rfqsim.proxy.running.Proxy) on its own event loop in a thread, so
    one run per mutation costs no process start; its findings are read in memory."""

    def __init__(self, upstream: str, report_dir: Path) -> None:
        options = Options(upstream, "127.0.0.1", 0, report_dir, False, True)
        self.proxy = Proxy(options, io.StringIO())
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> ProxyThread:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.proxy.start(), self._loop).result(30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.proxy.stop(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @property
    def url(self) -> str:
        return self.proxy.url

    def service_rules(self) -> set[str]:
        return {rule for (rule, side) in self.proxy.findings.counts if side == "service"}


def counting(mutation: Mutation, changed: Counter[str]) -> Mutation:
    """The mutation, counting the answers it changed (whether the traffic exercised it)."""
    rewrite = mutation.apply

    def apply(exchange: MutatedExchange) -> None:
        before = (exchange.status, list(exchange.headers.items()), exchange.body)
        rewrite(exchange)
        if (exchange.status, list(exchange.headers.items()), exchange.body) != before:
            changed[mutation.name] += 1

    mutation.apply = apply
    return mutation


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    env = {**os.environ, "RFQSIM_TRUSTED_PROXY": "true"}
    with serve(tmp_path_factory.mktemp("mutants"), env=env) as running:
        yield running


def _traffic(served: Served) -> Traffic:
    """The traffic's inputs: a key of its own, a funded taker, a ticker with two trades on it
    (two quotes filled on chain, in different seconds), limits that let a client IP meet a 429
    after 3 calls."""
    sim = SimControl(Client(served.api_url))
    target = Target(
        served.api_url,
        True,
        served.info,
        {c["chain_id"]: c["rpc_url"] for c in served.info["chains"]},
    )
    venue = Venue.of(target)
    chain = venue.chain(CHAIN)
    sim.set_limits(keyless_per_minute=3, outstanding_default=1_000_000, reset_windows=True)
    key = sim.create_key(
        "proxy-traffic",
        "test",
        ["trades:write", "trades:read", "webhooks:manage"],
        tier="unlimited",
    )["key"]
    keyed = Client(served.api_url, headers={"Authorization": f"Bearer {key}"})
    filler = venue.demo_wallets[1]
    body = {
        "chainId": CHAIN,
        "sellToken": chain.token("USDC").address,
        "buyToken": chain.token("USDT").address,
        "sellAmount": str(10 * 10**6),
        "taker": filler.address,
    }
    # Two fills of the same side, the second two seconds of service time later: the trade
    # history then has an order a reader can check (newest first).
    for fill in range(2):
        if fill:
            sim.advance(2)
        firm = keyed.post("/v2/rfq/request", json=body, timeout=75).json()["data"]
        execute_quote(chain, filler, firm)
    pairs = Client(served.api_url).get("/pairs").json()
    ticker = next(p["ticker_id"] for p in pairs if {p["base"], p["target"]} == {"USDC", "USDT"})

    def traded() -> bool:
        trades = Client(served.api_url).get("/historical_trades", params={"ticker_id": ticker})
        body = trades.json()
        return len(body["buy"]) + len(body["sell"]) >= 2

    wait_for(lambda: True if traded() else None, what="the fill on the feed")
    return Traffic("", sim, chain, str(key), venue.demo_wallets[0].address, ticker)


def _run(served: Served, traffic: Traffic, mutation: Mutation | None, report: Path) -> set[str]:
    with (
        running_proxy(served.api_url, mutation) as mutated,
        ProxyThread(mutated.url, report) as watching,
    ):
        traffic.url = watching.url
        traffic.run()
        return watching.service_rules()


def test_the_watching_proxy_flags_each_mutation_the_traffic_exercises(
    served: Served, tmp_path: Path
) -> None:
    traffic = _traffic(served)
    assert _run(served, traffic, None, tmp_path / "identity") == set(), "the unmutated run"
    changed: Counter[str] = Counter()
    rows: list[tuple[str, str, str]] = []
    wrong: list[str] = []
    for mutation in all_mutations():
        if not (mutation.name in CAUGHT or mutation.name in MISSED or mutation.equivalent):
            # The scripted traffic exercises the mutations in CAUGHT and MISSED (and the
            # allowed changes); the catalogue's later ones (the maker stream, ramp views, v1,
            # the webhook registry) are scored against the suite by `just mutants` only.
            continue
        flagged = _run(served, traffic, counting(mutation, changed), tmp_path / mutation.name)
        exercised = changed[mutation.name] > 0
        if not exercised:
            verdict = "not exercised"
        elif mutation.equivalent:
            verdict = "false alarm" if flagged else "accepted"
            if flagged:
                wrong.append(f"{mutation.name} (allowed by the spec) flagged {sorted(flagged)}")
        elif mutation.name in MISSED:
            verdict = "missed"
            if flagged:
                wrong.append(f"{mutation.name} is documented as missed but flagged {flagged}")
        else:
            hits = flagged & CAUGHT[mutation.name]
            verdict = "caught" if hits else "missed"
            if not hits:
                wrong.append(
                    f"{mutation.name}: expected one of {sorted(CAUGHT[mutation.name])}, "
                    f"flagged {sorted(flagged)}"
                )
        shown = ", ".join(sorted(flagged)) or "-"
        rows.append((mutation.name, verdict, shown))
    breaking = [r for r in rows if r[1] in ("caught", "missed")]
    caught = sum(1 for r in breaking if r[1] == "caught")
    print(f"\npassive mutation score: {caught} caught of {len(breaking)} exercised")
    for name, verdict, rules in rows:
        print(f"| `{name}` | {verdict} | {rules} |")
    assert not wrong, "\n".join(wrong)
    assert {r[0] for r in rows if r[1] == "not exercised"} == set(), rows
    assert caught == len(breaking) - len(MISSED)
