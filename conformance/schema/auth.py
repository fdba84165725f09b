"""Who the schemathesis run calls as: an API key for the keyed pass, a taker wallet whose proofs
of control (``takerProof``) the keyless pass signs, and the values that let generated requests
reach the service's real paths (served chains, corridor tokens, sizes).

Against the simulator (:func:`simulator_caller`) everything is set up through ``/_sim``: a key of
partner ``schemathesis`` with every taker scope and the ``unlimited`` tier, limits raised so the
run never meets a 429 it did not ask for (restored afterwards), and a fresh taker wallet funded
with a few tokens on each chain of the key's environment. The wallet's small balances bound how
much maker inventory the run's firm quotes can hold (proof of funds counts every live quote),
so the tests that run after it on the same simulator still find liquidity.

Against another deployment (:func:`external_caller`) the key comes from ``--api-key`` /
``RFQSIM_API_KEY``, the taker from ``RFQSIM_TAKER_KEY`` (a fresh, unfunded wallet otherwise:
proofs still verify, proof of funds then answers 400) and the chains from ``--rpc-url``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_utils.address import to_checksum_address

from conformance.deployment.funding import fund_wallet
from conformance.deployment.target import Target
from conformance.deployment.venue import Venue
from conformance.wire.client import Client
from conformance.wire.response_checks import parse_iso_utc
from conformance.wire.signing import sign_taker_proof
from rfqkit.wallets import Wallet

PARTNER = "schemathesis"
TAKER_SCOPES = ("trades:write", "trades:read", "webhooks:manage", "quotes:read")
RAISED_LIMITS: dict[str, Any] = {
    "keyless_per_minute": 1_000_000,
    "ip_backstop_per_minute": 10_000_000,
    "outstanding_default": 1_000_000,
}
_RESTORED = (
    "keyless_per_minute",
    "ip_backstop_per_minute",
    "outstanding_default",
    "outstanding_aggregator",
    "tiers",
)
TAKER_FUNDS_WHOLE_TOKENS = 3  # per token and chain: small on purpose (see the module docstring)
# Webhook URLs the run registers. On the simulator nothing listens at port 1 of loopback, so a
# delivery fails at once and never leaves the machine; `.invalid` never resolves (RFC 6761).
SIMULATOR_WEBHOOK_URL = "https://127.0.0.1:1/rfqsim-schemathesis"
EXTERNAL_WEBHOOK_URL = "https://rfqsim-schemathesis.invalid/webhook"


class CallerError(RuntimeError):
    """The run's caller could not be set up."""


@dataclass(frozen=True)
class ServedDirection:
    chain_id: int
    sell_token: str
    buy_token: str
    min_sell_amount: int


@dataclass(frozen=True)
class RunCredentials:
    """Credentials and request values of one schemathesis run."""

    api_key: str | None  # full key for the keyed pass; None skips that pass
    taker: Wallet  # named as `taker`; signs the keyless pass' proofs
    chain_ids: tuple[int, ...]  # chains the key may use
    corridors: tuple[ServedDirection, ...]  # served sell/buy directions, from the ladder
    webhook_url: str
    clock_offset_ms: int  # service clock minus this machine's clock

    def service_now_ms(self) -> int:
        return int(time.time() * 1000) + self.clock_offset_ms

    def proof(self, chain_id: int) -> dict[str, Any]:
        """A fresh ``takerProof`` for the taker on ``chain_id`` (random nonce, service time)."""
        return sign_taker_proof(
            self.taker.private_key,
            self.taker.address,
            chain_id,
            issued_at_ms=self.service_now_ms(),
        )

    def tokens(self) -> list[str]:
        return sorted(
            {c.sell_token for c in self.corridors} | {c.buy_token for c in self.corridors}
        )

    def amounts(self) -> list[str]:
        """Sizes worth trying: each corridor's minimum and a few multiples of it."""
        values = {
            m * c.min_sell_amount
            for c in self.corridors
            for m in (1, 2, 10)
            if c.min_sell_amount > 0
        }
        return [str(v) for v in sorted(values)]


def key_environment(api_key: str) -> str | None:
    """``test`` for ``tx_test_…`` keys, ``live`` for ``tx_live_…``, else None."""
    prefix = api_key.split("_", 2)
    return prefix[1] if len(prefix) == 3 and prefix[1] in ("live", "test") else None


def ladder_corridors(
    client: Client, chain_ids: Sequence[int], api_key: str | None
) -> list[ServedDirection]:
    """Every direction the ladder (``GET /v2/rfq/levels``) lists on these chains."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    found: list[ServedDirection] = []
    for chain_id in chain_ids:
        resp = client.get("/v2/rfq/levels", params={"chainId": chain_id}, headers=headers)
        data = resp.body.get("data") if resp.status == 200 and isinstance(resp.body, dict) else None
        for pair in (data or {}).get("pairs") or []:
            try:
                found.append(
                    ServedDirection(
                        chain_id,
                        to_checksum_address(str(pair["sellToken"])),
                        to_checksum_address(str(pair["buyToken"])),
                        int(pair.get("minSellAmount") or 0),
                    )
                )
            except (KeyError, ValueError, TypeError):
                continue
    return found


def clock_offset_ms(client: Client) -> int:
    """Service clock minus local clock, from ``GET /v2/health`` ``data.time`` (0 if absent)."""
    resp = client.get("/v2/health")
    data = resp.body.get("data") if isinstance(resp.body, dict) else None
    try:
        service = parse_iso_utc((data or {}).get("time"))
    except (TypeError, ValueError, AssertionError):
        return 0
    return int(service.timestamp() * 1000) - int(time.time() * 1000)


@contextmanager
def simulator_caller(target: Target, *, raise_limits: bool = True) -> Iterator[RunCredentials]:
    """A key, raised limits and a funded taker on an rfqsim simulator; afterwards the limits
    are restored and the key revoked. `raise_limits=False`: the simulator's own limits and a
    key of the default tier, so rate-limit answers are part of the run."""
    sim = target.sim()
    tier = "unlimited" if raise_limits else "default"
    record = sim.create_key(PARTNER, "test", TAKER_SCOPES, tier=tier)
    api_key = str(record["key"])
    environment = key_environment(api_key) or "test"
    venue = Venue.of(target)
    chain_ids = tuple(
        sorted(c for c, info in venue.chains.items() if info.environment == environment)
    )
    if not chain_ids or not venue.demo_wallets:
        raise CallerError(f"simulator has no {environment} chain or no demo wallet to fund from")
    before = sim.limits()
    sim.set_limits(**(RAISED_LIMITS if raise_limits else {}), reset_windows=True)
    try:
        taker = Wallet.create()
        for chain_id in chain_ids:
            chain = venue.chain(chain_id)
            funds = {t.address: t.units(TAKER_FUNDS_WHOLE_TOKENS) for t in chain.tokens.values()}
            fund_wallet(chain, venue.demo_wallets[-1], funds, native=0, wallet=taker)
        client = target.client()
        forget_endpoints(client, api_key)
        yield RunCredentials(
            api_key=api_key,
            taker=taker,
            chain_ids=chain_ids,
            corridors=tuple(ladder_corridors(client, chain_ids, api_key)),
            webhook_url=SIMULATOR_WEBHOOK_URL,
            clock_offset_ms=sim.now_ms() - int(time.time() * 1000),
        )
    finally:
        restore = {k: before[k] for k in _RESTORED if k in before}
        sim.set_limits(**restore, reset_windows=True)
        sim.call("POST", f"keys/{record['key_id']}/revoke")


def forget_endpoints(client: Client, api_key: str) -> int:
    """Delete every webhook endpoint of the key's partner; returns how many.

    Simulator only: partner ``schemathesis`` belongs to this harness, and an interrupted earlier
    run may have left endpoints that would count against the registry's per-partner cap.
    """
    keyed = client.with_headers({"Authorization": f"Bearer {api_key}"})
    listed = keyed.get("/v1/webhooks")
    data = listed.body.get("data") if isinstance(listed.body, dict) else None
    deleted = 0
    for endpoint in data if isinstance(data, list) else []:
        if isinstance(endpoint, dict) and isinstance(endpoint.get("id"), str):
            deleted += keyed.delete(f"/v1/webhooks/{endpoint['id']}").status == 200
    return deleted


def external_caller(
    target: Target,
    *,
    api_key: str | None,
    taker_private_key: str | None = None,
    chain_ids: Sequence[int] = (),
) -> RunCredentials:
    """The caller for a deployment that is not a simulator: nothing is created on it."""
    if taker_private_key:
        account = Account.from_key(taker_private_key)
        taker = Wallet(to_checksum_address(account.address), taker_private_key)
    else:
        taker = Wallet.create()
    chains = tuple(sorted(set(chain_ids) or set(target.rpc_urls)))
    client = target.client()
    return RunCredentials(
        api_key=api_key,
        taker=taker,
        chain_ids=chains,
        corridors=tuple(ladder_corridors(client, chains, api_key)),
        webhook_url=EXTERNAL_WEBHOOK_URL,
        clock_offset_ms=clock_offset_ms(client),
    )


_SECRETS = (
    (re.compile(r"(tx_(?:live|test)_[0-9a-f]{12})\.[A-Za-z0-9_-]+"), r"\1.<redacted>"),
    (re.compile(r"rfqc_[A-Za-z0-9_-]+"), "rfqc_<redacted>"),
    (re.compile(r"whsec_[A-Za-z0-9_-]+"), "whsec_<redacted>"),
)


def scrub(text: str) -> str:
    """``text`` with API key secrets, claim tokens and webhook signing secrets masked."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def redact(headers: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Request headers for a report, credentials masked (keys and claim tokens never leak)."""
    secret = {"authorization", "x-api-key", "x-rfq-claim", "cookie"}
    return {
        name: "<redacted>" if name.lower() in secret else ", ".join(values)
        for name, values in headers.items()
    }
