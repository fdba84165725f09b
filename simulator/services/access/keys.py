"""API keys and the partner records that own them.

Format `tx_<live|test>_<public prefix>.<secret>`: the part before the dot identifies the key and is
safe to log (and the only part ever logged); only a SHA-256 of the secret is stored, and the full
key is returned once, at creation. Any key of a partner owns that partner's RFQs."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from rfqkit.wallets import derive_wallet
from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound, Unauthorized
from simulator.randomness import RandomSource, secret_token
from simulator.services.shared.state import StateSchema

KeyEnvironment = Literal["live", "test"]
KeyStatus = Literal["active", "suspended", "revoked"]

TAKER_SCOPES = frozenset(
    {"trades:write", "trades:read", "webhooks:manage", "rfq:aggregator", "quotes:read"}
)
# the maker:* family; maker:fill marks a filling operator (its levels are v1 fastFill bids)
MAKER_SCOPES = frozenset({"maker:stream", "maker:read", "maker:fill"})
ALL_SCOPES = TAKER_SCOPES | MAKER_SCOPES

# Lowercase hex prefix of 12, then a URL-safe secret: both parts are ASCII by construction.
KEY_PATTERN = re.compile(r"^(tx_(live|test)_[0-9a-f]{12})\.([A-Za-z0-9_-]{32,128})$")


def _hash_secret(secret: str) -> bytes:
    # A fast hash is enough: secrets are 256-bit random, so there is nothing to brute-force.
    return hashlib.sha256(secret.encode()).digest()


@dataclass
class Partner:
    partner_id: str  # ptn_…
    name: str


@dataclass
class ApiKey:
    key_id: str  # the public prefix, e.g. tx_live_3f2a9c1b7e04: safe to log
    partner_id: str  # owner; any key of the partner owns the partner's RFQs
    environment: KeyEnvironment  # live keys reach live chains, test keys test chains
    scopes: frozenset[str]
    tier: str  # rate-limit tier name (settings.rate_limits.tiers)
    name: str
    created_at: datetime
    secret_hash: bytes = field(repr=False)  # SHA-256 of the secret; the secret is never kept
    status: KeyStatus = "active"
    maker_wallet: str | None = None  # maker credentials: the maker's funding wallet

    @property
    def is_maker_credential(self) -> bool:
        return bool(self.scopes) and self.scopes <= MAKER_SCOPES


class InvalidApiKey(Unauthorized):
    default_message = "API key missing, malformed, unknown, suspended or revoked"

    def __init__(self) -> None:
        # One answer for every key failure: a caller learns nothing about which keys exist.
        super().__init__(details={"reason": "invalid_api_key"})


class KeyService:
    def __init__(self, clock: Clock, random: RandomSource) -> None:
        self._clock = clock
        self._random = random  # ids and prefixes only; secrets come from the OS CSPRNG
        self.partners: dict[str, Partner] = {}  # by partner id
        self.keys: dict[str, ApiKey] = {}  # by key id (public prefix)
        # Told (key id, new status) when a key stops being active: the maker stream ends that
        # credential's open connections.
        self.withdrawn_listeners: list[Callable[[str, KeyStatus], None]] = []

    def create_partner(self, name: str) -> Partner:
        partner = Partner(partner_id=self._random.new_id("ptn", 8), name=name)
        self.partners[partner.partner_id] = partner
        return partner

    def partner_by_name(self, name: str) -> Partner:
        for partner in self.partners.values():
            if partner.name == name:
                return partner
        return self.create_partner(name)

    def create_key(
        self,
        *,
        partner_id: str,
        environment: KeyEnvironment,
        scopes: frozenset[str],
        name: str = "",
        tier: str = "default",
        maker_wallet: str | None = None,
        material: tuple[str, str] | None = None,
    ) -> tuple[ApiKey, str]:
        """Returns the record and the full key, which is not stored and cannot be shown again.
        `material` (public prefix hex, secret) is for the demo keys only (`demo_key_material`);
        every other key's secret comes from the OS CSPRNG."""
        if partner_id not in self.partners:
            raise NotFound(f"No partner {partner_id}")
        unknown = scopes - ALL_SCOPES
        if unknown:
            raise InvalidRequest(
                f"Unknown scopes: {', '.join(sorted(unknown))}",
                details={"reason": "unknown_scope", "scopes": sorted(unknown)},
            )
        if scopes & MAKER_SCOPES and scopes & TAKER_SCOPES:
            raise InvalidRequest(
                "Maker credentials carry only maker:* scopes",
                details={"reason": "mixed_scopes"},
            )
        if (maker_wallet is not None) != bool(scopes & MAKER_SCOPES):
            raise InvalidRequest(
                "A maker credential needs maker_wallet, and only a maker credential may name one",
                details={"reason": "maker_wallet"},
            )
        if material is None:
            key_id = f"tx_{environment}_{self._random.hex(6)}"
            secret = secret_token("", 32)
        else:
            key_id, secret = f"tx_{environment}_{material[0]}", material[1]
            if key_id in self.keys:
                raise InvalidRequest(f"Key {key_id} exists", details={"reason": "duplicate_key"})
        key = ApiKey(
            key_id=key_id,
            partner_id=partner_id,
            environment=environment,
            scopes=scopes,
            tier=tier,
            name=name,
            created_at=self._clock.now(),
            secret_hash=_hash_secret(secret),
            maker_wallet=maker_wallet,
        )
        self.keys[key_id] = key
        return key, f"{key_id}.{secret}"

    def authenticate(self, presented: str) -> ApiKey:
        match = KEY_PATTERN.match(presented)
        if match is None:
            raise InvalidApiKey()
        key_id, _, secret = match.groups()
        key = self.keys.get(key_id)
        # Compare even when the key is unknown, so timing does not tell known ids apart.
        stored = key.secret_hash if key is not None else b"\0" * 32
        if not hmac.compare_digest(stored, _hash_secret(secret)) or key is None:
            raise InvalidApiKey()
        if key.status != "active":
            raise InvalidApiKey()
        return key

    def get(self, key_id: str) -> ApiKey:
        key = self.keys.get(key_id)
        if key is None:
            raise NotFound(f"No key {key_id}")
        return key

    def set_status(self, key_id: str, status: KeyStatus) -> ApiKey:
        key = self.get(key_id)
        if key.status == "revoked" and status != "revoked":
            raise InvalidRequest("A revoked key stays revoked", details={"reason": "revoked"})
        was_active = key.status == "active"
        key.status = status
        if was_active and status != "active":
            for listener in self.withdrawn_listeners:
                listener(key_id, status)
        return key


DEMO_TAKER_SCOPES = frozenset({"trades:write", "trades:read", "webhooks:manage", "quotes:read"})


def demo_key_material(seed: int, label: str) -> tuple[str, str]:
    """(public prefix, secret) of demo key `label` under `seed`: the same every run with the same
    seed, so an integrator pastes the demo keys into their config once.
    Demo keys only: anyone who knows the seed knows
    them, which is the point of a demo key and wrong for any other."""
    digest = hashlib.sha256(f"rfqsim demo key v1:{seed}:{label}".encode()).digest()
    secret = hashlib.sha256(b"secret:" + digest).digest()
    return digest[:6].hex(), base64.urlsafe_b64encode(secret).rstrip(b"=").decode()


def create_demo_keys(keys: KeyService, seed: int) -> list[tuple[str, ApiKey, str]]:
    """The keys `rfqsim serve` prints: a taker key per environment and an aggregator key, all of
    the partner `demo`, derived from `seed` (only their hashes are kept)."""
    partner = keys.partner_by_name("demo")
    wanted: list[tuple[str, KeyEnvironment, frozenset[str]]] = [
        ("taker-live", "live", DEMO_TAKER_SCOPES),
        ("taker-test", "test", DEMO_TAKER_SCOPES),
        ("aggregator-live", "live", DEMO_TAKER_SCOPES | {"rfq:aggregator"}),
    ]
    return [(label, *_seeded_key(keys, seed, partner, label, env, s)) for label, env, s in wanted]


# What an operator hands a QA team beside the demo keys (`rfqsim serve --no-control-api`'s ready
# file): keys with exactly one or two scopes, so the suite sees 403 for a missing scope without
# the control API, and a second partner, so it sees one partner's RFQs and webhook endpoints
# closed to another; an aggregator key of the test environment (the router path); and a key
# whose rate-limit window the suite may run out (:data:`SPENDABLE_QA_KEYS`: no other test uses
# it). The aggregator key comes last: a test asking for a trades key takes the first that fits.
QA_KEYS: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("qa-trades-write", "demo", frozenset({"trades:write"})),
    ("qa-trades-read", "demo", frozenset({"trades:read"})),
    ("qa-webhooks-manage", "demo", frozenset({"webhooks:manage"})),
    ("qa-trader", "demo", frozenset({"trades:write", "trades:read"})),
    ("qa-other-trader", "demo-other", frozenset({"trades:write", "trades:read"})),
    ("qa-other-webhooks", "demo-other", frozenset({"webhooks:manage"})),
    ("qa-spendable", "demo", frozenset({"quotes:read"})),
    ("qa-aggregator", "demo", frozenset({"rfq:aggregator", "trades:write", "trades:read"})),
)
SPENDABLE_QA_KEYS = frozenset({"qa-spendable"})


def create_qa_keys(keys: KeyService, seed: int) -> list[tuple[str, ApiKey, str]]:
    """The test-environment keys of :data:`QA_KEYS`, derived from `seed` like the demo keys."""
    return [
        (label, *_seeded_key(keys, seed, keys.partner_by_name(partner), label, "test", scopes))
        for label, partner, scopes in QA_KEYS
    ]


def _seeded_key(
    keys: KeyService,
    seed: int,
    partner: Partner,
    label: str,
    environment: KeyEnvironment,
    scopes: frozenset[str],
    maker_wallet: str | None = None,
) -> tuple[ApiKey, str]:
    prefix, secret = demo_key_material(seed, label)
    existing = keys.keys.get(f"tx_{environment}_{prefix}")
    if existing is not None:  # resumed from a state directory: kept as it was left
        return existing, f"{existing.key_id}.{secret}"
    return keys.create_key(
        partner_id=partner.partner_id,
        environment=environment,
        scopes=scopes,
        name=label,
        maker_wallet=maker_wallet,
        material=(prefix, secret),
    )


# The funding wallet of the QA maker credential: no simulated maker's (rfqkit.wallets.maker_wallet),
# funded by nobody. A maker that never publishes levels is never part of a quote.
QA_MAKER_WALLET = derive_wallet("qa-maker").address


def create_qa_maker_key(keys: KeyService, seed: int) -> tuple[str, ApiKey, str]:
    """The maker credential `rfqsim serve --no-control-api` hands a QA team (its ready file's
    `maker_keys`), as the operator of a real deployment issues one: test environment, scope
    maker:stream, partner `qa`, for `QA_MAKER_WALLET`. The simulated fleet never uses it, so
    while nobody connects with it nothing changes for the fleet. Derived from `seed` like the
    demo keys (label `maker-test`)."""
    label = "maker-test"
    partner = keys.partner_by_name("qa")
    scopes = frozenset({"maker:stream"})
    return (label, *_seeded_key(keys, seed, partner, label, "test", scopes, QA_MAKER_WALLET))


class KeysSaved(StateSchema):
    """What reset and snapshots put back of the KeyService: partners and keys by id."""

    partners: dict[str, Partner]
    keys: dict[str, ApiKey]
