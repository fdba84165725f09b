"""What happened to each RFQ, as data (GET /_sim/rfqs, the console's waterfall): the request,
every maker asked and how and when it answered, the selection, the response, every status change
with its cause, the on-chain fill and the events it produced. Also each maker's answers as the
venue saw them (counts and reply latencies: the console's Makers view).

The auction, the service and settlement call the methods here at the moment things happen; each
call appends one small tuple (services/shared/timelines.py). Makers are recorded by wallet and
credential prefix; names of the simulated fleet are put on when read."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, get_args

from simulator.services.rfq.model import RfqStatus, StoredRfq
from simulator.services.shared.state import StateSchema
from simulator.services.shared.timelines import (
    EventStep,
    SimTime,
    StatusStep,
    StepKinds,
    SubmittedStep,
    Timelines,
)

Outcome = Literal[
    "quoted",  # a signed order that passed every check (usable)
    "declined",  # a `decline` (reason: the maker's)
    "silent",  # no answer within the reply budget (so far: a late answer turns it `late`)
    "late",  # answered after the reply budget
    "rejected",  # an order that failed a check (reason: RejectReason)
    "disconnected",  # the maker's socket closed before it answered
    "unverified",  # its funding could not be read on chain: not usable
]
OUTCOMES: tuple[Outcome, ...] = (
    "quoted",
    "declined",
    "silent",
    "late",
    "rejected",
    "disconnected",
    "unverified",
)

RFQ_STATUSES: tuple[str, ...] = (*get_args(RfqStatus), "error")  # error: the request failed


class RfqReceivedStep(NamedTuple):
    """The request arrived. caller: who asked (key prefix or ip); preferred/restricted: the
    steering lists; head_start_ms: the preferred makers' head start (0 without preferred)."""

    at: SimTime
    kind: str
    caller: str
    taker: str
    preferred: list[str]
    restricted: list[str]
    reply_budget_ms: int
    head_start_ms: int


class RfqAskedStep(NamedTuple):
    """A maker was asked. round: preferred (first), open (everyone, or after the head start),
    bundle (a leg)."""

    at: SimTime
    kind: str
    maker: str
    maker_id: str
    quote_id: str
    round: str
    preferred: bool


class RfqAnsweredStep(NamedTuple):
    """A maker answered (or did not, in time). sell_amount ... rate_ray: what its signed order
    offered, when it sent one."""

    at: SimTime
    kind: str
    maker: str
    quote_id: str
    outcome: str
    latency_ms: float
    reason: str | None
    detail: str | None
    sell_amount: str | None
    buy_amount: str | None
    fee_amount: str | None
    rate_ray: str | None


class RfqSelectedStep(NamedTuple):
    """The quote was made. mode: single or bundle; winners: wallets; losers: [[wallet, why,
    vs_winner_bps]] (vs_winner_bps: how far a usable losing quote's rate fell short of the
    winner's)."""

    at: SimTime
    kind: str
    mode: str
    winners: list[str]
    losers: list[list[str | float | None]]


class RfqRespondedStep(NamedTuple):
    """The response. status: quoted, no_quote or error; reason: the no_quote reason (or the
    error's code); latency_ms: request to response."""

    at: SimTime
    kind: str
    status: str
    reason: str | None
    latency_ms: float
    expires_at: SimTime | None


class RfqCancelledStep(NamedTuple):
    """The taker cancelled its quote."""

    at: SimTime
    kind: str


class RfqFillStep(NamedTuple):
    """A maker's order filled on chain (amounts in atomic units, as text)."""

    at: SimTime
    kind: str
    maker: str
    tx_hash: str
    block: int | None
    maker_gave: str
    maker_received: str
    fee: str


# Every kind of an RFQ's step, as kept (render_steps), and the statuses an RFQ can have.
RFQ_STEPS = StepKinds(
    {
        "received": RfqReceivedStep,
        "asked": RfqAskedStep,
        "answered": RfqAnsweredStep,
        "selected": RfqSelectedStep,
        "responded": RfqRespondedStep,
        "status": StatusStep,
        "cancelled": RfqCancelledStep,
        "submitted": SubmittedStep,
        "fill": RfqFillStep,
        "event": EventStep,
    },
    RFQ_STATUSES,
)

LATENCIES_KEPT = 1_000  # reply latencies kept per maker (p50/p99, histogram)


@dataclass(frozen=True)
class MakerOffer:
    """What one maker's signed order offered the taker, in atomic units (quote_checks.offer)."""

    sell_amount: int  # what would leave the taker: the order's output plus its fee
    buy_amount: int  # what the taker would receive: the order's input
    fee_amount: int
    rate_ray: int  # buy per sell in whole tokens, RAY-scaled (shared/amounts.rate_ray)

    def values(self) -> tuple[str, str, str, str]:
        """As the `answered` step keeps them (amounts as text)."""
        return str(self.sell_amount), str(self.buy_amount), str(self.fee_amount), str(self.rate_ray)


NO_OFFER = (None, None, None, None)  # an answer without a signed order


@dataclass
class MakerReplies:
    """One maker's answers since the last reset, as the auction saw them."""

    wallet: str
    maker_id: str  # the credential prefix it last answered with
    counts: dict[str, int] = field(default_factory=dict)  # outcome -> how many
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCIES_KEPT))

    def __post_init__(self) -> None:
        if self.latencies_ms.maxlen != LATENCIES_KEPT:  # read back from a saved state
            self.latencies_ms = deque(self.latencies_ms, maxlen=LATENCIES_KEPT)


class RfqHistory:
    def __init__(self, timelines: Timelines) -> None:
        self.timelines = timelines
        self.replies: dict[str, MakerReplies] = {}  # by wallet, lowercase

    # --- the request and its auction ---------------------------------------------------

    def received(
        self,
        rfq_id: str,
        *,
        caller: str,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        sell_amount: int | None,
        buy_amount: int | None,
        taker: str,
        preferred: list[str],
        restricted: list[str],
        reply_budget_ms: int,
        head_start_ms: int,
    ) -> None:
        self.timelines.start(
            rfq_id,
            "soliciting",
            {
                "chain_id": chain_id,
                "sell_token": sell_token,
                "buy_token": buy_token,
                "sell_amount": None if sell_amount is None else str(sell_amount),
                "buy_amount": None if buy_amount is None else str(buy_amount),
                "taker": taker,
                "caller": caller,
                "reply_budget_ms": reply_budget_ms,
                "makers": [],  # wallets asked, in order
                "maker_ids": [],  # their credential prefixes (the `maker=` filter)
                "winners": [],  # wallets whose orders make the quote
                "expires_at": None,
            },
        )
        self.timelines.step(
            rfq_id,
            "received",
            caller,
            taker,
            preferred,
            restricted,
            reply_budget_ms,
            head_start_ms if preferred else 0,
        )

    def asked(
        self, rfq_id: str, wallet: str, maker_id: str, quote_id: str, round_: str, preferred: bool
    ) -> None:
        timeline = self.timelines.get(rfq_id)
        if timeline is None:
            return
        makers: list[str] = timeline.summary["makers"]
        if wallet not in makers:
            makers.append(wallet)
            timeline.summary["maker_ids"].append(maker_id)
        self.timelines.step(rfq_id, "asked", wallet, maker_id, quote_id, round_, preferred)

    def answered(
        self,
        rfq_id: str,
        wallet: str,
        maker_id: str,
        quote_id: str,
        outcome: Outcome,
        latency_ms: float,
        reason: str | None = None,
        detail: str | None = None,
        offer: MakerOffer | None = None,
    ) -> None:
        latency_ms = round(latency_ms, 3)
        offered = NO_OFFER if offer is None else offer.values()
        self.timelines.step(
            rfq_id, "answered", wallet, quote_id, outcome, latency_ms, reason, detail, *offered
        )
        replies = self._replies(wallet, maker_id)
        replies.counts[outcome] = replies.counts.get(outcome, 0) + 1
        if outcome not in ("silent", "disconnected"):
            replies.latencies_ms.append(latency_ms)
        self._makers_changed()

    def answered_late(
        self, rfq_id: str, wallet: str, maker_id: str, quote_id: str, latency_ms: float, kind: str
    ) -> None:
        """An answer arrived after the budget for a request recorded `silent`: it is `late`."""
        latency_ms = round(latency_ms, 3)
        self.timelines.step(
            rfq_id, "answered", wallet, quote_id, "late", latency_ms, kind, None, *NO_OFFER
        )
        replies = self._replies(wallet, maker_id)
        if replies.counts.get("silent", 0) > 0:
            replies.counts["silent"] -= 1
        replies.counts["late"] = replies.counts.get("late", 0) + 1
        replies.latencies_ms.append(latency_ms)
        self._makers_changed()

    def selected(
        self, rfq_id: str, mode: str, winners: list[str], losers: list[list[str | float | None]]
    ) -> None:
        timeline = self.timelines.get(rfq_id)
        if timeline is not None:
            timeline.summary["winners"] = winners
        self.timelines.step(rfq_id, "selected", mode, winners, losers)

    def responded(
        self,
        rfq_id: str,
        status: str,
        reason: str | None,
        latency_ms: float,
        expires_at: float | None,
    ) -> None:
        timeline = self.timelines.get(rfq_id)
        if timeline is not None:
            timeline.summary["expires_at"] = expires_at
        self.timelines.step(rfq_id, "responded", status, reason, round(latency_ms, 3), expires_at)
        self.timelines.status(rfq_id, status, "response")

    def taken_over(self, record: StoredRfq, holder: int) -> None:
        """Several instances: the RFQ's record came from instance `holder` (gone); its timeline
        there stayed there, this one starts from what the record says."""
        makers = [order.maker for order in record.quote.orders] if record.quote else []
        self.timelines.start(
            record.rfq_id,
            record.status,
            {
                "chain_id": record.chain_id,
                "sell_token": record.sell_token,
                "buy_token": record.buy_token,
                "sell_amount": None if record.sell_amount is None else str(record.sell_amount),
                "buy_amount": None if record.buy_amount is None else str(record.buy_amount),
                "taker": record.taker,
                "caller": record.owner,
                "reply_budget_ms": round((record.reply_by - record.created_at) * 1000),
                "makers": makers,
                "maker_ids": [],  # their credential prefixes were known where it was made
                "winners": makers,
                "expires_at": record.expires_at,
            },
            created_at=record.created_at,
        )
        self.timelines.status(
            record.rfq_id, record.status, f"taken over from instance {holder}, which is gone"
        )

    def amounts(self, rfq_id: str, sell_amount: int | None, buy_amount: int | None) -> None:
        """The amounts the RFQ's record shows now (the quote's, then what settled): its
        summary's `sell_amount` and `buy_amount`."""
        self.timelines.update(
            rfq_id,
            sell_amount=None if sell_amount is None else str(sell_amount),
            buy_amount=None if buy_amount is None else str(buy_amount),
        )

    # --- after the response --------------------------------------------------------------

    def status(self, rfq_id: str, status: str, cause: str) -> None:
        self.timelines.status(rfq_id, status, cause)

    def step(self, rfq_id: str, kind: str, *values: Any) -> None:
        self.timelines.step(rfq_id, kind, *values)

    # --- the makers ----------------------------------------------------------------------

    def _replies(self, wallet: str, maker_id: str) -> MakerReplies:
        key = wallet.lower()
        replies = self.replies.get(key)
        if replies is None:
            replies = self.replies[key] = MakerReplies(wallet, maker_id)
        replies.maker_id = maker_id
        return replies

    def _makers_changed(self) -> None:
        changes = self.timelines.changes
        if changes is not None:
            changes("makers", "")

    def forget(self) -> None:
        self.timelines.forget()
        self.replies.clear()


HISTOGRAM_BIN_MS = 50  # the Makers view's latency histogram: 50 ms bins...
HISTOGRAM_BINS = 24  # ... up to 1.2 s; the last bin also holds everything slower


@dataclass(frozen=True)
class ReplySummary:
    """One maker's answers as the venue saw them: counts per outcome and reply latencies."""

    counts: dict[str, int]  # outcome -> how many, since the last reset
    latencies_kept: int  # how many latencies the percentiles and histogram are over
    p50_ms: float | None
    p99_ms: float | None
    histogram: list[int]  # answers per HISTOGRAM_BIN_MS bin, from 0


def percentile(ordered: list[float], fraction: float) -> float | None:
    """Nearest rank over an ascending list (None when empty)."""
    if not ordered:
        return None
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def summarize(replies: MakerReplies | None) -> ReplySummary:
    if replies is None:
        return ReplySummary({}, 0, None, None, [0] * HISTOGRAM_BINS)
    ordered = sorted(replies.latencies_ms)
    histogram = [0] * HISTOGRAM_BINS
    for latency in ordered:
        histogram[min(HISTOGRAM_BINS - 1, int(latency // HISTOGRAM_BIN_MS))] += 1
    return ReplySummary(
        dict(replies.counts),
        len(ordered),
        percentile(ordered, 0.50),
        percentile(ordered, 0.99),
        histogram,
    )


class RepliesSaved(StateSchema):
    """What reset and snapshots put back of RfqHistory besides the timelines: the makers'
    answers."""

    replies: dict[str, MakerReplies]
