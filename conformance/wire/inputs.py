"""What a QA team gives the suite about a deployment it cannot control: :class:`Inputs`.

* chains: ``chain_id``, ``rpc_url`` and (optionally) ``environment`` (``live``/``test``);
* API keys with their scopes (:class:`GivenKey`): a trades key, a read-only key, a webhooks key,
  an aggregator key, ... Scopes not declared are found out by harmless probes
  (:func:`probe_scopes`). A key marked ``spendable`` is one whose rate-limit window the suite
  may run out (a minute at a time): only the limiter's tests use it. A key may carry a
  ``partner`` label, the QA team's own name for the partner account it belongs to (not a
  secret): keys with the same label are of one partner,
  keys with different labels of different partners; the tests of partner-scoped ownership need
  two keys of one partner and a key of another (config file only; no label, no such test);
* taker wallet private keys (EOAs holding gas and the sell tokens on the test chain);
* maker credentials (``maker_keys``): keys with only ``maker:*`` scopes, which open
  ``WSS /v2/maker/stream`` (spec 1 "API keys"). An operator gives one of the test environment so
  the suite can check who may open the stream and that taker paths answer it 403; the suite
  never publishes levels or signs orders with it;
* a public https URL that reaches the suite's own webhook receiver, and where that receiver
  listens on this machine (``webhook_listen``, default ``127.0.0.1:8765``; the QA team's tunnel
  or reverse proxy forwards the public URL there, path unchanged) with, for a tunnel that passes
  TLS through, the certificate and key it serves (``webhook_tls_cert``/``webhook_tls_key``).

They come from flags (``--api-key KEY[=SCOPE,SCOPE]``, ``--spendable-key KEY[=SCOPE,SCOPE]``,
``--maker-key KEY``, ``--taker-key HEX``,
``--webhook-public-url URL``, ``--webhook-listen HOST:PORT``, ``--webhook-tls-cert FILE``,
``--webhook-tls-key FILE``, ``--rpc-url CHAIN=URL``) and from a YAML or JSON file
(``--conformance-config FILE``, ``rfqsim conformance --config FILE``) shaped like::

    base_url: https://staging.example
    chains:
      - {chain_id: 97, rpc_url: https://rpc.example/97, environment: test}
    api_keys:
      - {key: tx_test_..., scopes: [trades:write, trades:read], partner: acme}
      - {key: tx_test_..., scopes: [trades:read], partner: acme}
      - {key: tx_test_..., scopes: [trades:read], partner: globex}
      - tx_test_...            # scopes probed
      - {key: tx_test_..., scopes: [quotes:read], spendable: true}
    maker_keys:
      - {key: tx_test_..., scopes: [maker:stream]}
    taker_wallets: [0x<64 hex>]
    webhook_public_url: https://hooks.example/qa
    webhook_listen: 127.0.0.1:8765

``rfqsim serve --no-control-api`` writes its ready file in this shape (``api_url`` for
``base_url``), so the simulator can stand in for such a deployment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from eth_account import Account

from conformance.wire.client import Client
from rfqkit.wallets import Wallet

TAKER_SCOPES = frozenset({"trades:write", "trades:read"})
# Spec 1: 56 and 97 are the live corridor's chains: mainnet rules, and the test corridor.
KNOWN_ENVIRONMENTS = {56: "live", 97: "test"}
_PROBE_RFQ = "/v2/rfq/rfq_conformance_scope_probe"


class InputError(ValueError):
    """A flag or config entry the suite cannot use; the message says which."""


class KeyRefused(InputError):
    """A given key the target refuses (401): unknown, revoked, suspended or malformed."""


# Spec 1 "API keys": <env>_live_<public_prefix>.<secret> (tx_live_..., tx_test_...).
KEY_FORMAT = re.compile(r"^[a-z]+_(live|test)_[^.\s]+\.\S+$")


@dataclass(frozen=True)
class GivenKey:
    key: str
    scopes: frozenset[str] | None  # None: not declared (probe_scopes finds them)
    partner: str | None = None  # the QA team's label of the key's partner account; None: unknown
    # The QA team lets the suite run this key's rate-limit window out (for a minute at a
    # time): only the limiter's own tests use it, so no other test is throttled by them.
    spendable: bool = False

    @property
    def environment(self) -> str | None:
        """``live`` or ``test`` from the key's prefix (``tx_live_`` / ``tx_test_``)."""
        for environment in ("live", "test"):
            if f"_{environment}_" in self.key.split(".", 1)[0]:
                return environment
        return None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    @property
    def public(self) -> str:
        """The part of the key that is safe to print."""
        return self.key.split(".", 1)[0]


@dataclass(frozen=True)
class GivenChain:
    chain_id: int
    rpc_url: str | None
    environment: str | None
    # Contracts named in the config (reactor, fee_recipient, signature_transfer, ...): taken as
    # given, not discovered.
    contracts: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Inputs:
    chains: Mapping[int, GivenChain] = field(default_factory=dict)
    keys: tuple[GivenKey, ...] = ()
    taker_wallets: tuple[Wallet, ...] = ()
    webhook_public_url: str | None = None
    base_url: str | None = None
    webhook_listen: str | None = None  # HOST:PORT the receiver binds (public URL forwarded here)
    webhook_tls_cert: str | None = None  # PEM files: serve https there (TLS passed through)
    webhook_tls_key: str | None = None
    maker_keys: tuple[GivenKey, ...] = ()  # maker credentials (maker:* scopes only)

    def maker_key(self, environment: str) -> GivenKey | None:
        """The first given maker credential of ``environment`` (by its ``tx_<env>_`` prefix)."""
        return next((k for k in self.maker_keys if k.environment == environment), None)

    def environment(self, chain_id: int) -> str | None:
        given = self.chains.get(chain_id)
        if given is not None and given.environment:
            return given.environment
        return KNOWN_ENVIRONMENTS.get(chain_id)

    def key(self, scopes: Iterable[str], environment: str | None = None) -> GivenKey | None:
        """The first given key holding every scope (in that environment when named)."""
        wanted = frozenset(scopes)
        for key in self.keys:
            if key.spendable or (environment is not None and key.environment != environment):
                continue
            if key.scopes is not None and wanted <= key.scopes:
                return key
        return None

    @property
    def shared_keys(self) -> tuple[GivenKey, ...]:
        """The keys every test may use: all but the spendable ones."""
        return tuple(k for k in self.keys if not k.spendable)

    def spendable_key(self, environment: str = "test") -> GivenKey | None:
        """A key whose rate-limit window the suite may run out, in ``environment``."""
        return next((k for k in self.keys if k.spendable and k.environment == environment), None)

    def with_probed_scopes(self, client: Client) -> Inputs:
        keys = tuple(
            k if k.scopes is not None else replace(k, scopes=probe_scopes(client, k))
            for k in self.keys
        )
        return replace(self, keys=keys)


# What a key may do, found out by requests that change nothing: the answer with the scope,
# the answer without it. An unknown RFQ answers 404 with the scope and 403 without (status for
# trades:read, cancel for trades:write); the webhook list and the v1 corridor list answer 200
# or 403. rfq:aggregator cannot be probed without a quote: declare it.
_PROBES: tuple[tuple[str, str, str, int], ...] = (
    ("trades:read", "GET", _PROBE_RFQ, 404),
    ("trades:write", "POST", f"{_PROBE_RFQ}/cancel", 404),
    ("webhooks:manage", "GET", "/v1/webhooks", 200),
    ("quotes:read", "GET", "/v1/corridors", 200),
)


PROBED_SCOPES = frozenset(scope for scope, _, _, _ in _PROBES)


def probe_scopes(client: Client, key: GivenKey) -> frozenset[str]:
    """The key's scopes, probed (paced: a shared key may be at the end of its window). A 401 is
    :class:`KeyRefused`; another answer that is neither the with-scope nor the 403 answer stops
    the run's use of the key: :class:`InputError` says which request got what."""
    keyed = client.with_headers(key.headers).paced()
    scopes: set[str] = set()
    for scope, method, path, granted in _PROBES:
        resp = keyed.request(method, path)
        if resp.status == 401:
            raise KeyRefused(
                f"the key {key.public}… is refused (401): unknown, revoked, suspended or malformed"
            )
        if resp.status == granted:
            scopes.add(scope)
        elif resp.status != 403:
            raise InputError(
                f"probing the scopes of the key {key.public}…: {method} {path} answered "
                f"{resp.status} ({resp.raw[:200].decode('utf-8', 'replace')}); expected "
                f"{granted} with {scope} or 403 without it (declare the scopes: --api-key "
                "KEY=SCOPE,SCOPE)"
            )
    return frozenset(scopes)


def probe_maker_key(client: Client, key: GivenKey) -> None:
    """Checks a given maker credential by a request that changes nothing: a taker path answers
    a maker credential 403 (spec 1 "API keys"), an unknown or withdrawn key 401
    (:class:`KeyRefused`); any other answer (a taker key reads the RFQ) is :class:`InputError`."""
    resp = client.with_headers(key.headers).paced().get(_PROBE_RFQ)
    if resp.status == 401:
        raise KeyRefused(
            f"the maker credential {key.public}… is refused (401): unknown, revoked, suspended "
            "or malformed"
        )
    if resp.status != 403:
        raise InputError(
            f"the maker credential {key.public}…: GET {_PROBE_RFQ} answered {resp.status}; a "
            "maker credential gets 403 on taker paths (is it a taker key? give it as --api-key)"
        )


def parse_key(value: str, flag: str = "--api-key", *, spendable: bool = False) -> GivenKey:
    """``KEY`` or ``KEY=scope,scope``."""
    key, sep, scopes = value.partition("=")
    if not key.strip():
        raise InputError(f"{flag} expects KEY or KEY=SCOPE,SCOPE, got {value!r}")
    declared = frozenset(s.strip() for s in scopes.split(",") if s.strip()) if sep else None
    return GivenKey(key.strip(), declared, spendable=spendable)


def parse_wallet(private_key: str) -> Wallet:
    try:
        account = Account.from_key(private_key.strip())
    except (ValueError, TypeError) as exc:
        raise InputError("a taker wallet key is not a private key (32 bytes hex)") from exc
    return Wallet(account.address, private_key.strip())


def _public(entry: Any) -> str:
    """An api_keys entry named without its secret: the key's public part, else its type."""
    key = entry.get("key") if isinstance(entry, Mapping) else entry
    if isinstance(key, str):
        return f"{key.split('.', 1)[0]}…"
    return f"of type {type(entry).__name__}"


def _config_keys(entries: Sequence[Any], name: str = "api_keys") -> list[GivenKey]:
    keys = []
    for entry in entries:
        if isinstance(entry, str):
            keys.append(parse_key(entry, name))
        elif isinstance(entry, Mapping) and isinstance(entry.get("key"), str):
            scopes, partner = entry.get("scopes"), entry.get("partner")
            declared = frozenset(str(s) for s in scopes) if scopes is not None else None
            spendable = entry.get("spendable", False)
            if not isinstance(spendable, bool):
                raise InputError(f"{name} entry {_public(entry)}: spendable is true or false")
            keys.append(
                GivenKey(str(entry["key"]), declared, str(partner) if partner else None, spendable)
            )
        else:
            raise InputError(
                f"{name} entry {_public(entry)}: give a key string or "
                "{key, scopes, partner, spendable}"
            )
    return keys


def _config_chains(entries: Any) -> dict[int, GivenChain]:
    items = entries.items() if isinstance(entries, Mapping) else enumerate(entries or [])
    chains: dict[int, GivenChain] = {}
    for name, entry in items:
        if not isinstance(entry, Mapping):
            raise InputError(f"chains entry {entry!r}: give chain_id, rpc_url, environment")
        chain_id = int(entry.get("chain_id", name))
        rpc_url, environment = entry.get("rpc_url"), entry.get("environment")
        contracts = entry.get("contracts") or {}
        if not isinstance(contracts, Mapping):
            raise InputError(f"chains entry {chain_id}: contracts is NAME: ADDRESS pairs")
        chains[chain_id] = GivenChain(
            chain_id,
            str(rpc_url) if rpc_url else None,
            str(environment) if environment else None,
            {str(k): str(v) for k, v in contracts.items()},
        )
    return chains


def read_config(path: str | Path) -> Inputs:
    """The inputs of a YAML or JSON config file (JSON is YAML)."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read the config file {path}: {exc}") from exc
    if not isinstance(raw, Mapping):
        raise InputError(f"config file {path}: expected a mapping at the top")
    return inputs_of(raw)


def inputs_of(raw: Mapping[str, Any]) -> Inputs:
    """The inputs of a parsed config (or of an ``rfqsim serve --no-control-api`` ready file,
    which has the same shape with ``api_url`` for ``base_url``)."""
    wallets = []
    for entry in raw.get("taker_wallets") or []:
        secret = entry.get("private_key") if isinstance(entry, Mapping) else entry
        if isinstance(secret, int):  # YAML reads an unquoted 0x... as a number
            secret = f"0x{secret:064x}"
        wallets.append(parse_wallet(str(secret)))
    base_url = raw.get("base_url") or raw.get("api_url")
    return Inputs(
        chains=_config_chains(raw.get("chains")),
        keys=tuple(_config_keys(raw.get("api_keys") or [])),
        taker_wallets=tuple(wallets),
        webhook_public_url=raw.get("webhook_public_url"),
        base_url=str(base_url).rstrip("/") if base_url else None,
        webhook_listen=raw.get("webhook_listen"),
        webhook_tls_cert=raw.get("webhook_tls_cert"),
        webhook_tls_key=raw.get("webhook_tls_key"),
        maker_keys=tuple(_config_keys(raw.get("maker_keys") or [], "maker_keys")),
    )


def merge(
    config: Inputs,
    *,
    keys: Sequence[str],
    wallets: Sequence[str],
    webhook: str | None,
    rpc_urls: Mapping[int, str],
    webhook_listen: str | None = None,
    webhook_tls: tuple[str | None, str | None] = (None, None),
    spendable_keys: Sequence[str] = (),
    maker_keys: Sequence[str] = (),
) -> Inputs:
    """Flags added to (and, for a chain's RPC URL or the webhook URL, overriding) the file."""
    chains = dict(config.chains)
    for chain_id, url in rpc_urls.items():
        known = chains.get(chain_id)
        chains[chain_id] = replace(known, rpc_url=url) if known else GivenChain(chain_id, url, None)
    return Inputs(
        chains=chains,
        keys=config.keys
        + tuple(parse_key(k) for k in keys)
        + tuple(parse_key(k, "--spendable-key", spendable=True) for k in spendable_keys),
        taker_wallets=config.taker_wallets + tuple(parse_wallet(w) for w in wallets),
        webhook_public_url=webhook or config.webhook_public_url,
        base_url=config.base_url,
        webhook_listen=webhook_listen or config.webhook_listen,
        webhook_tls_cert=webhook_tls[0] or config.webhook_tls_cert,
        webhook_tls_key=webhook_tls[1] or config.webhook_tls_key,
        maker_keys=config.maker_keys + tuple(parse_key(k, "--maker-key") for k in maker_keys),
    )


def combine(first: Inputs, second: Inputs) -> Inputs:
    """Both sets of inputs: keys and wallets of both, ``second``'s chains and URLs winning."""
    return Inputs(
        chains={**first.chains, **second.chains},
        keys=first.keys + second.keys,
        taker_wallets=first.taker_wallets + second.taker_wallets,
        webhook_public_url=second.webhook_public_url or first.webhook_public_url,
        base_url=second.base_url or first.base_url,
        webhook_listen=second.webhook_listen or first.webhook_listen,
        webhook_tls_cert=second.webhook_tls_cert or first.webhook_tls_cert,
        webhook_tls_key=second.webhook_tls_key or first.webhook_tls_key,
        maker_keys=first.maker_keys + second.maker_keys,
    )
