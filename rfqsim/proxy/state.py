"""What only shows across exchanges, remembered per object with the spec's lifetimes as
expiries (:mod:`rfqsim.proxy.memory`): an RFQ's status moves only along the spec's transitions,
its claim token is returned once and is what authorizes a keyless caller, its settled amounts
are the quote's and stay fixed, a second submit with another hash is a conflict and cancel of an
RFQ that is not quoted is refused; a ramp transfer's status never moves backwards and an intent
key replays the same transfer with a fresh claim token; an Idempotency-Key replays the first
answer byte for byte; the limiter's X-RateLimit-Remaining counts down within a window.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from conformance.calls.ramp_transfers import assert_moved_forward
from conformance.checks.assertions import CheckedQuote, assert_filled_record, iso_seconds
from conformance.wire.response_checks import assert_retry_after
from conformance.wire.wording import shown
from rfqkit.timestamps import isoformat
from rfqsim.proxy import spec
from rfqsim.proxy.conventions import RETRY_AFTER
from rfqsim.proxy.exchange import ProxiedExchange
from rfqsim.proxy.expect import expect_equal, expect_true
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.memory import ExpiringMap
from rfqsim.proxy.read_twice import ReadTwice
from rfqsim.proxy.resources import within_ttl
from rfqsim.proxy.spec import SpecOperation

HOUR = 3600.0
# An RFQ is remembered for its quote's life, the order deadline and the 24 h correction window
# after it (spec 1 "Limits": correction window 24 hours); a ramp transfer for the three days
# the provider is re-checked after its payment window (spec 2 "Limits").
RFQ_LIFETIME_S = 25 * HOUR
TRANSFER_LIFETIME_S = 3 * 24 * HOUR + HOUR
IDEMPOTENCY_LIFETIME_S = 24 * HOUR  # spec 3 does not say how long a key replays: a day
DECIMALS_LIFETIME_S = 24 * HOUR
CAPACITY = 100_000  # per kind of object: beyond it the least recently seen are forgotten
SAME_WINDOW_S = 1.5  # X-RateLimit-Reset is whole seconds: windows ending this close are one
# Names the instance of a deployment that served an answer (rfqsim's venue of several): the
# limiter's windows are per instance (spec 1 "Limits"), so answers are compared per instance.
INSTANCE_HEADER = "X-Rfqsim-Instance"

# Spec 1 "States and transitions": each status and the row it is entered by, and the statuses
# reachable from each (through any number of rows; a proxy may not see every step).
ENTERED_BY = {
    "soliciting": "rfq/states/none-post-v2-rfq-request",
    "quoted": "rfq/states/soliciting-maker-replies-within-reply-budget-to-quoted",
    "no_quote": "rfq/states/soliciting-maker-replies-within-reply-budget-to-no_quote",
    "submitted": "rfq/states/quoted-post-v2-rfq-id-submit",
    "filled": "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "failed": "rfq/states/submitted-signed-order-deadline-passes",
    "expired": "rfq/states/quoted-quote-lapses",
}
REACHABLE = {
    "soliciting": frozenset({"quoted", "no_quote", "submitted", "filled", "failed", "expired"}),
    "quoted": frozenset({"submitted", "filled", "failed", "expired"}),
    "submitted": frozenset({"filled", "failed"}),
    "failed": frozenset({"filled"}),
    "expired": frozenset({"filled"}),
    "filled": frozenset(),
    "no_quote": frozenset(),
}
NOT_CANCELLABLE = frozenset({"submitted", "filled", "failed", "expired", "no_quote"})
LIVE = frozenset({"soliciting", "quoted", "submitted"})

CLAIM_ONCE = "rfq/auth/claim-token/returned-once-post-v2"
CLAIM_AUTHORIZES = "rfq/auth/claim-token/without-key-only-authorization"
OWNERSHIP = "rfq/endpoints/cancel-submit-status/ownership"
SETTLED_AMOUNTS = "rfq/resources/rfq-record/sellamount-buyamount-feeamount"
QUOTE_TTL = "rfq/limits/quote-ttl"
RECORD_EXPIRY = "rfq/resources/rfq-record/expiresat"
CANCEL_CONFLICT = "rfq/states/rule-1"
SUBMIT_LAPSED = "rfq/states/rule-2"
SUBMIT_OTHER_HASH = "rfq/states/rule-4"
SUBMIT_SAME_HASH = "rfq/states/quoted-post-v2-rfq-id-submit"
TRANSFER_FORWARD = "ramp/states/transfer-status/rules"
TRANSFER_CLAIM = "ramp/resources/transfer/claim-token"
INTENT_KEY = "ramp/endpoints/post-v2-ramp-transfers/idempotent-per-intentkey"
IDEMPOTENCY = "v1/endpoints/every-post-creates-may"
LIMITER = {
    "rfq": "rfq/limits/rate-limit-headers-responses-handled",
    "v1": "v1/limits/per-key-rate-limit",
}


def digest(value: str | bytes) -> bytes:
    """A short one-way digest: claim tokens and bodies are remembered by it, never in clear."""
    data = value.encode() if isinstance(value, str) else value
    return hashlib.sha256(data).digest()[:16]


@dataclass(slots=True)
class WatchedRfq:
    status: str
    claim: bytes | None = None  # digest of its claim token
    expires_at: float | None = None  # the firm quote's expiresAt (Unix seconds)
    settled: tuple[int, int, int] | None = None  # the quote's (takerPays, buyAmount, feeAmount)
    filled: tuple[str, str, str] | None = None  # the amounts first read as filled
    tx_hash: str | None = None  # the first hash accepted by submit


@dataclass(slots=True)
class Window:
    ends_at: float  # Unix seconds the answer said the window resets at
    remaining: int
    finished: float  # monotonic, when that answer was complete


@dataclass(slots=True)
class Replay:
    request: bytes  # digest of the request body
    status: int
    answer: bytes  # digest of the answer body


class State:
    """The proxy's memory across exchanges and the checks that need it."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.rfqs: ExpiringMap[str, WatchedRfq] = ExpiringMap(capacity)
        self.claims: ExpiringMap[bytes, bool] = ExpiringMap(capacity)
        self.transfers: ExpiringMap[str, str] = ExpiringMap(capacity)
        self.intents: ExpiringMap[tuple[str, str], tuple[bytes, str, bytes]] = ExpiringMap(capacity)
        self.replays: ExpiringMap[tuple[str, str, str, str], Replay] = ExpiringMap(capacity)
        self.windows: ExpiringMap[tuple[str, str, int, str], Window] = ExpiringMap(capacity)
        self.decimals: ExpiringMap[tuple[int, str], int] = ExpiringMap(capacity)
        self.read_twice = ReadTwice(capacity)

    def size(self) -> int:
        return sum(
            len(m)
            for m in (
                self.rfqs,
                self.claims,
                self.transfers,
                self.intents,
                self.replays,
                self.windows,
                self.decimals,
                self.read_twice,
            )
        )

    # -- what other checks read -------------------------------------------------------------

    def pair_decimals(self, chain_id: int, sell: str, buy: str) -> tuple[int, int] | None:
        sell_decimals = self.decimals.get((chain_id, sell.lower()))
        buy_decimals = self.decimals.get((chain_id, buy.lower()))
        if sell_decimals is None or buy_decimals is None:
            return None
        return sell_decimals, buy_decimals

    def learn_ladder(self, data: Mapping[str, Any]) -> None:
        """The tokens' decimals as a ladder published them (to check a quote's rateRay)."""
        chain = data.get("chainId")
        if not isinstance(chain, int):
            return
        for pair in data.get("pairs") or []:
            for side in ("sell", "buy"):
                token, decimals = pair.get(f"{side}Token"), pair.get(f"{side}Decimals")
                if isinstance(token, str) and isinstance(decimals, int):
                    self.decimals.set((chain, token.lower()), decimals, DECIMALS_LIFETIME_S)

    # -- the checks ---------------------------------------------------------------------------

    def observe(self, inspection: Inspection, operation: SpecOperation | None) -> None:
        ex = inspection.exchange
        self._limiter(inspection)
        if operation is None or not ex.readable:
            return
        self.read_twice.observe(inspection, operation)
        if operation in spec.IDEMPOTENT_POSTS and ex.status < 300:
            self._idempotency(inspection)
        if operation == spec.RFQ_REQUEST and ex.status == 200:
            self._created(inspection)
        elif operation == spec.RFQ_GET:
            self._read(inspection)
        elif operation == spec.RFQ_SUBMIT:
            self._submitted(inspection)
        elif operation == spec.RFQ_CANCEL:
            self._cancelled(inspection)
        elif operation.surface == "ramp":
            self._ramp(inspection, operation)

    def _known(self, ex: ProxiedExchange) -> tuple[str, WatchedRfq | None]:
        rfq_id = ex.path.split("/")[3]
        return rfq_id, self.rfqs.get(rfq_id)

    def _remember(self, rfq_id: str, rfq: WatchedRfq) -> None:
        self.rfqs.set(rfq_id, rfq, RFQ_LIFETIME_S)

    def _claim_once(self, inspection: Inspection, token: Any, rule: str) -> None:
        if not isinstance(token, str):
            return
        key = digest(token)
        if self.claims.get(key):
            inspection.fail(rule, "a claim token already returned by an earlier answer, again")
        else:
            inspection.check(rule, lambda: None)
            self.claims.set(key, True, RFQ_LIFETIME_S)

    def _created(self, inspection: Inspection) -> None:
        data = inspection.exchange.data
        if not isinstance(data, Mapping) or not isinstance(data.get("rfqId"), str):
            return
        status = str(data.get("status"))
        token = data.get("claimToken")
        self._claim_once(inspection, token, CLAIM_ONCE)
        rfq = WatchedRfq(status=status, claim=digest(token) if isinstance(token, str) else None)
        quote = data.get("quote")
        if status == "quoted" and isinstance(quote, Mapping):
            try:
                rfq.expires_at = iso_seconds(quote["expiresAt"])
                rfq.settled = (
                    int(quote["takerPays"]),
                    int(quote["buyAmount"]),
                    int(quote["feeAmount"]),
                )
            except (AssertionError, KeyError, TypeError, ValueError):
                pass  # the answer's own checks report it
        self._remember(data["rfqId"], rfq)

    def _owner_checks(self, inspection: Inspection, rfq: WatchedRfq | None) -> bool:
        """A keyless caller's claim token against the one the RFQ was answered with. Returns
        whether the caller is known to hold the right token."""
        ex = inspection.exchange
        claim = ex.request_headers.get("X-Rfq-Claim")
        if rfq is None or rfq.claim is None or ex.keyed or claim is None:
            return False
        right = digest(claim) == rfq.claim
        if right and ex.status == 404 and rfq.status in LIVE:
            inspection.fail(
                CLAIM_AUTHORIZES, f"the RFQ's own claim token answered 404 ({rfq.status})"
            )
        elif not right and 200 <= ex.status < 300:
            inspection.fail(OWNERSHIP, f"a wrong claim token answered {ex.status}, not 404")
        else:
            inspection.check(OWNERSHIP if not right else CLAIM_AUTHORIZES, lambda: None)
        return right

    def _moved(
        self, inspection: Inspection, rfq_id: str, rfq: WatchedRfq | None, status: Any
    ) -> WatchedRfq:
        if not isinstance(status, str) or status not in ENTERED_BY:
            return rfq or WatchedRfq(status="")
        if rfq is None:
            return WatchedRfq(status=status)
        before = rfq.status
        if before in REACHABLE and status != before:
            if status in REACHABLE[before]:
                inspection.check(ENTERED_BY[status], lambda: None)
            else:
                inspection.fail(
                    ENTERED_BY[status],
                    f"{rfq_id} went from {before} to {status}; the spec's transitions lead from "
                    f"{before} only to {sorted(REACHABLE[before]) or 'nothing (terminal)'}",
                )
        rfq.status = status
        return rfq

    def _read(self, inspection: Inspection) -> None:
        ex = inspection.exchange
        rfq_id, rfq = self._known(ex)
        self._owner_checks(inspection, rfq)
        record = ex.data
        if ex.status != 200 or not isinstance(record, Mapping):
            return
        rfq = self._moved(inspection, rfq_id, rfq, record.get("status"))
        if rfq.expires_at is not None and record.get("createdAt") is not None:
            quoted = rfq.expires_at
            inspection.check(
                QUOTE_TTL, lambda: within_ttl(quoted, iso_seconds(record["createdAt"]))
            )
            inspection.check(
                RECORD_EXPIRY,
                lambda: _same_instant(record.get("expiresAt"), quoted, "record expiresAt"),
            )
        if record.get("status") == "filled":
            self._filled(inspection, rfq_id, rfq, record)
        if rfq.status:
            self._remember(rfq_id, rfq)

    def _filled(
        self, inspection: Inspection, rfq_id: str, rfq: WatchedRfq, record: Mapping[str, Any]
    ) -> None:
        amounts = (record.get("sellAmount"), record.get("buyAmount"), record.get("feeAmount"))
        if rfq.settled is not None:
            taker_pays, bought, fee = rfq.settled
            quote = {"takerPays": taker_pays, "buyAmount": bought, "feeAmount": fee}
            checked = CheckedQuote({"rfqId": rfq_id, "quote": quote}, [])
            inspection.check(SETTLED_AMOUNTS, lambda: assert_filled_record(record, checked))
        if rfq.filled is None:
            if all(isinstance(a, str) for a in amounts):
                rfq.filled = (str(amounts[0]), str(amounts[1]), str(amounts[2]))
        else:
            first = rfq.filled
            inspection.check(
                SETTLED_AMOUNTS,
                lambda: expect_equal(amounts, first, "the filled amounts (fixed once filled)"),
            )

    def _submitted(self, inspection: Inspection) -> None:
        ex = inspection.exchange
        rfq_id, rfq = self._known(ex)
        self._owner_checks(inspection, rfq)
        request, _ = ex.request_json
        tx_hash = request.get("txHash") if isinstance(request, Mapping) else None
        if rfq is None or not isinstance(tx_hash, str):
            return
        tx_hash = tx_hash.lower()
        accepted = 200 <= ex.status < 300
        if rfq.tx_hash is not None:
            if tx_hash != rfq.tx_hash and accepted:
                inspection.fail(SUBMIT_OTHER_HASH, "a second hash was accepted, not 409")
            elif tx_hash == rfq.tx_hash and ex.status == 409:
                inspection.fail(SUBMIT_SAME_HASH, "the same hash again answered 409")
            else:
                inspection.check(SUBMIT_OTHER_HASH, lambda: None)
        elif accepted:
            self._first_submit(inspection, rfq)
            rfq.tx_hash = tx_hash
        data = ex.data
        if accepted and isinstance(data, Mapping):
            rfq = self._moved(inspection, rfq_id, rfq, data.get("status"))
        self._remember(rfq_id, rfq)

    def _first_submit(self, inspection: Inspection, rfq: WatchedRfq) -> None:
        # A filled RFQ accepts the fill's own hash (rule 4); a lapsed one accepts none.
        if rfq.status in ("no_quote", "expired"):
            inspection.fail(
                SUBMIT_SAME_HASH, f"submit of an RFQ that is {rfq.status} was accepted, not 409"
            )
            return
        _before_expiry(inspection, rfq, SUBMIT_LAPSED, "a submit after expiresAt is refused")

    def _cancelled(self, inspection: Inspection) -> None:
        ex = inspection.exchange
        _, rfq = self._known(ex)
        self._owner_checks(inspection, rfq)
        if rfq is None or not 200 <= ex.status < 300:
            return
        if rfq.status in NOT_CANCELLABLE:
            inspection.fail(CANCEL_CONFLICT, f"cancel of a {rfq.status} RFQ answered {ex.status}")
            return
        _before_expiry(inspection, rfq, CANCEL_CONFLICT, "a cancel after expiresAt (lapsed) is 409")

    # -- ramp -----------------------------------------------------------------------------

    def _ramp(self, inspection: Inspection, operation: SpecOperation) -> None:
        ex = inspection.exchange
        body = ex.json
        if not isinstance(body, Mapping) or not 200 <= ex.status < 300:
            return
        if operation in (spec.RAMP_TRANSFER_CREATE, spec.RAMP_RETRY):
            self._claim_once(inspection, body.get("claimToken"), TRANSFER_CLAIM)
        if operation == spec.RAMP_TRANSFER_CREATE:
            self._intent(inspection, body)
        listed = body.get("transfers")
        transfers: list[Any] = listed if isinstance(listed, list) else []
        if isinstance(body.get("transfer"), Mapping):
            transfers = [body["transfer"]]
        for transfer in transfers:
            if not isinstance(transfer, Mapping) or not isinstance(transfer.get("id"), str):
                continue
            key = transfer["id"]
            before = self.transfers.get(key)
            if inspection.check(TRANSFER_FORWARD, partial(assert_moved_forward, before, transfer)):
                self.transfers.set(key, str(transfer.get("status")), TRANSFER_LIFETIME_S)

    def _intent(self, inspection: Inspection, body: Mapping[str, Any]) -> None:
        request, _ = inspection.exchange.request_json
        transfer = body.get("transfer")
        if not isinstance(request, Mapping) or not isinstance(transfer, Mapping):
            return
        intent, wallet = request.get("intentKey"), request.get("wallet")
        if not isinstance(intent, str) or not isinstance(wallet, str):
            return
        # The same body and key: the proof may be signed afresh, so it is left out.
        terms = digest(
            json.dumps({k: v for k, v in request.items() if k != "proof"}, sort_keys=True)
        )
        token = digest(str(body.get("claimToken")))
        key = (wallet.lower(), intent)
        first = self.intents.get(key)
        if first is None:
            self.intents.set(key, (terms, str(transfer.get("id")), token), IDEMPOTENCY_LIFETIME_S)
        elif first[0] == terms:
            inspection.check(
                INTENT_KEY,
                lambda: expect_equal(transfer.get("id"), first[1], "the replayed transfer's id"),
            )
            inspection.check(
                INTENT_KEY,
                lambda: expect_true(token != first[2], "a fresh claim token on a replay"),
            )

    # -- v1 idempotency, limiter ------------------------------------------------------------

    def _idempotency(self, inspection: Inspection) -> None:
        ex = inspection.exchange
        idempotency_key = ex.request_headers.get("Idempotency-Key")
        if idempotency_key is None or not 200 <= ex.status < 300:
            return
        key = (ex.caller, ex.method, ex.path, idempotency_key)
        now = Replay(digest(ex.request_body), ex.status, digest(ex.response.raw))
        first = self.replays.get(key)
        if first is None:
            self.replays.set(key, now, IDEMPOTENCY_LIFETIME_S)
        elif first.request != now.request:
            inspection.fail(
                IDEMPOTENCY, "an Idempotency-Key sent again with another body", "client"
            )
        else:
            inspection.check(
                IDEMPOTENCY,
                lambda: expect_true(
                    (now.status, now.answer) == (first.status, first.answer),
                    "a replay under the same Idempotency-Key is byte for byte the first answer",
                ),
            )

    def _limiter(self, inspection: Inspection) -> None:
        ex = inspection.exchange
        if ex.surface not in LIMITER:
            return
        values = [ex.headers.get(n) for n in ("X-RateLimit-Limit", "X-RateLimit-Remaining")]
        reset = ex.headers.get("X-RateLimit-Reset")
        if not all(v is not None and v.isdigit() for v in (*values, reset)):
            return
        limit, remaining = int(str(values[0])), int(str(values[1]))
        finished_wall = ex.wall + (ex.finished - ex.started)
        now = Window(finished_wall + int(str(reset)), remaining, ex.finished)
        key = (ex.caller, ex.surface, limit, ex.headers.get(INSTANCE_HEADER) or "")
        before = self.windows.get(key)
        if (
            before is not None
            and ex.started > before.finished  # sent after the other was answered
            and abs(now.ends_at - before.ends_at) <= SAME_WINDOW_S
        ):
            if (
                before.remaining == 0
                and ex.status == 429
                and spec.RFQ_REQUEST.pattern.match(ex.path)
            ):
                # Sent once the window was spent: the limiter refused it, not the outstanding
                # cap (conventions.py leaves this case here).
                inspection.check(RETRY_AFTER, lambda: assert_retry_after(ex.response))
            inspection.check(
                LIMITER[ex.surface],
                lambda: expect_true(
                    remaining < before.remaining or remaining == before.remaining == 0,
                    f"X-RateLimit-Remaining {remaining} after {before.remaining} in the same "
                    "window: it counts down",
                ),
            )
        if before is None or ex.finished >= before.finished:
            self.windows.set(key, now, float(int(str(reset)) + 2))


def _before_expiry(inspection: Inspection, rfq: WatchedRfq, rule: str, what: str) -> None:
    """An answer that accepted a submit or cancel was served before the quote's expiresAt (by
    the answer's Date, whole seconds)."""
    served, expires = inspection.exchange.date, rfq.expires_at
    if served is not None and expires is not None:
        inspection.check(rule, lambda: expect_true(served - 1 <= expires, what))


def _same_instant(value: Any, seconds: float, what: str) -> None:
    expected = isoformat(datetime.fromtimestamp(seconds, UTC))
    assert abs(iso_seconds(value) - seconds) < 0.001, (
        f"{what}: expected the quote's, {expected}, got {shown(value)}"
    )
