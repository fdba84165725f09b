"""What a test needs from the target or the QA team, stated in its marker:

    @pytest.mark.needs("key:trades", "taker_wallet")

* ``sim_control``: the simulator's ``/_sim`` control API (clock, faults, makers, keys made on
  the spot): rules a client cannot trigger on a real deployment;
* ``key:trades``, ``key:read``, ``key:webhooks``, ``key:aggregator``, ``key:v1``, ``key:live``:
  a given API key with those scopes (``key:v1``: every scope of the closed v1 API; ``key:live``:
  any key of the live environment); a simulator with its control API makes its own;
* ``spendable_key``: a given test key whose rate-limit window the suite may run out;
* ``key:maker``: a given maker credential of the test environment (``--maker-key``); a simulator
  with its control API makes its own;
* ``taker_wallet``: a given taker wallet key (an EOA with gas and sell tokens on the test chain);
* ``webhook_url``: ``--webhook-public-url``, a public https URL reaching the suite's receiver;
* ``rpc``: a JSON-RPC URL of every chain the suite trades on;
* ``loopback``: a target on 127.0.0.0/8, so each test chooses a client IP of its own (per-IP
  limits really spent);
* ``time<=Ns``: the test waits up to N seconds of real time (skipped when ``--max-wait`` is
  shorter).

A test whose need is not met is skipped with the reason ``needs <need>: <the input to give>``;
the report lists, per skipped rule, the inputs that would have run it (:func:`needs_in`).

Every skip has one of three kinds (:data:`SKIP_KINDS`, :func:`skip_kind`):

* ``inherent_control``: the test needs the control API for a reason a real deployment never
  offers a client (``@pytest.mark.sim_only(because=...)``, :data:`INHERENT`);
* ``not_ported``: the test needs the control API but could be written without it (``sim_only``
  without a reason, a fixture that needs ``/_sim``), or its skip names no input at all: our debt;
* ``missing_input``: an input the QA team can give would run it (a key, a wallet, a URL, ...).

A test that finds out only while running that an input is missing or unusable (a second taker
wallet, a contract discovery could not find without a wallet, a shared key's outstanding-RFQ cap
held by another client past the suite's wait) raises :class:`InputProblem`; the plugin reports it
as skipped with that reason, never as failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

MARKER = "needs"
KEY_SCOPES: dict[str, tuple[frozenset[str], str | None]] = {
    "key:trades": (frozenset({"trades:write", "trades:read"}), "test"),
    "key:read": (frozenset({"trades:read"}), "test"),
    "key:webhooks": (frozenset({"webhooks:manage", "trades:write"}), "test"),
    "key:aggregator": (frozenset({"rfq:aggregator", "trades:write"}), None),
    "key:v1": (
        frozenset({"quotes:read", "trades:read", "trades:write", "webhooks:manage"}),
        "test",
    ),
    "key:live": (frozenset(), "live"),
}
HOW: dict[str, str] = {
    "sim_control": "the simulator's /_sim control API (not available on a real deployment)",
    "key:trades": "--api-key KEY=trades:write,trades:read (a tx_test_ key)",
    "key:read": "--api-key KEY=trades:read (a tx_test_ key)",
    "key:webhooks": "--api-key KEY=webhooks:manage,trades:write,trades:read (a tx_test_ key)",
    "key:aggregator": "--api-key KEY=rfq:aggregator,trades:write,trades:read",
    "key:v1": "--api-key KEY=quotes:read,trades:read,trades:write,webhooks:manage (a tx_test_ key)",
    "key:live": "--api-key with a tx_live_ key",
    "spendable_key": "--spendable-key KEY=quotes:read (a tx_test_ key no other client uses: "
    "the suite runs its rate-limit window out)",
    "key:maker": "--maker-key KEY (a maker credential of the test environment: maker:* scopes "
    "only, as its operator issues one to a maker)",
    "taker_wallet": "--taker-key HEX (an EOA with gas and sell tokens on the test chain)",
    "webhook_url": "--webhook-public-url URL (public https, reaching this machine), or "
    "--webhook-local against rfqsim serve on this machine",
    "rpc": "--rpc-url CHAIN=URL for the test chain",
    "loopback": "a --base-url on 127.0.0.0/8 (the suite then chooses its client IP per test; "
    "run it on the deployment's own host)",
    "liquidity": "makers of the deployment quoting the test chain's minimum size",
    "contracts": "the chain's contracts in the config file "
    "(chains: [{chain_id, contracts: {NAME: ADDRESS}}])",
}
# Why a ``sim_only`` test inherently needs the control API: ``@pytest.mark.sim_only(because=...)``.
# A rule whose every test carries one of these is one "a real deployment does not let a client
# trigger"; the report leaves it out of the share of control-free rules that ran and passed. A
# ``sim_only`` test without a reason is one that could be written without control, not yet is.
INHERENT: dict[str, str] = {
    "faults": "forces a dependency failure or a server fault (chain, index, provider, 5xx)",
    "makers": "needs the venue's makers to behave a chosen way (silent, late, declining, "
    "bad signature, offline, a given depth or steering target)",
    "clock": "needs service time moved by minutes to days, or a fill timed against the "
    "service's own deadlines",
    "provider": "needs the ramp provider's own decisions (KYC review, refusals, payments, payouts)",
    "deployment": "needs an operator's action or a deployment setting a client does not "
    "choose (a key suspended, a provider switched off, a second instance, production)",
    "simulator": "checks the simulator's own control API",
    "decision": "checks a decision rfqsim took where the spec says 'not shown' "
    "(docs/decisions.md): another deployment may decide otherwise",
}
SKIP_KINDS = ("inherent_control", "not_ported", "missing_input")
INHERENT_CONTROL, NOT_PORTED, MISSING_INPUT = SKIP_KINDS
_TIME = re.compile(r"^time<=(\d+)s$")
_REASON = re.compile(r"needs ([a-z_]+(?::[a-z0-9]+)?|time<=\d+s):")


def inherent_reason(args: Sequence[Any], kwargs: Mapping[str, Any]) -> str | None:
    """The ``because`` of a ``sim_only`` marker (keyword or sole argument), None without one.
    Raises ValueError for a reason not in :data:`INHERENT`."""
    if len(args) > 1 or set(kwargs) - {"because"} or (args and kwargs):
        raise ValueError("sim_only takes one reason: sim_only(because=...)")
    reason = kwargs.get("because", args[0] if args else None)
    if reason is not None and reason not in INHERENT:
        raise ValueError(f"unknown sim_only reason {reason!r}; one of {', '.join(INHERENT)}")
    return str(reason) if reason is not None else None


def known(need: str) -> bool:
    return need in HOW or bool(_TIME.match(need))


def skip_message(need: str, detail: str | None = None) -> str:
    return f"needs {need}: {detail or HOW.get(need, need)}"


def control_skip_message(base_url: str, reason: str | None) -> str:
    """Why a test that needs ``/_sim`` is skipped against ``base_url``: the inherent reason
    (``sim_only(because=...)``) when it has one, else that it is not ported yet."""
    if reason is not None:
        return skip_message(
            "sim_control", f"{reason}: {INHERENT[reason]} (a real deployment does not offer it)"
        )
    return skip_message(
        "sim_control",
        f"not ported yet: this test could run without /_sim but does not yet "
        f"({base_url} has no /_sim)",
    )


class InputProblem(Exception):
    """A test's input is missing or unusable, found out while it runs: the plugin reports the
    test as skipped with :func:`skip_message` (``needs <need>: <detail>``), never as failed."""

    def __init__(self, need: str, detail: str | None = None) -> None:
        self.need = need
        self.detail = detail
        super().__init__(skip_message(need, detail))


def skip_kind(reason: str | None, inherent: str | None) -> str:
    """The kind of one test's skip, from its reason and its ``sim_only`` reason (if any)."""
    needs = needs_in([reason or ""])
    if needs and "sim_control" not in needs:
        return MISSING_INPUT
    return INHERENT_CONTROL if inherent is not None else NOT_PORTED


def unmet(
    need: str,
    *,
    controllable: bool,
    keys: Mapping[str, bool],
    taker_wallet: bool,
    webhook_url: bool,
    rpc: bool,
    max_wait: float | None,
    loopback: bool = True,
    spendable_key: bool = False,
    maker_key: bool = False,
) -> str | None:
    """The skip message when ``need`` is not met, else None. ``keys`` tells, per ``key:*``
    need, whether a given key satisfies it."""
    if need == "sim_control":
        return None if controllable else skip_message(need)
    if need in KEY_SCOPES:
        return None if controllable or keys.get(need) else skip_message(need)
    if need == "key:maker":
        return None if controllable or maker_key else skip_message(need)
    if need == "taker_wallet":
        return None if controllable or taker_wallet else skip_message(need)
    if need == "spendable_key":
        return None if controllable or spendable_key else skip_message(need)
    if need == "webhook_url":
        return None if controllable or webhook_url else skip_message(need)
    if need == "rpc":
        return None if rpc else skip_message(need)
    if need == "loopback":
        return None if loopback else skip_message(need)
    wait = _TIME.match(need)
    if wait and max_wait is not None and int(wait.group(1)) > max_wait:
        return skip_message(need, f"waits {wait.group(1)} s of real time; --max-wait {max_wait}")
    return None


def needs_in(reasons: Iterable[str]) -> list[str]:
    """The needs named by skip reasons, in first-seen order."""
    found: dict[str, None] = {}
    for reason in reasons:
        for need in _REASON.findall(reason or ""):
            found.setdefault(need, None)
    return list(found)
