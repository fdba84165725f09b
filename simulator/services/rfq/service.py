"""The v2 RFQ service: firm requests, previews, the ladder, and the RFQ lifecycle as callers see
it (status, cancel, submit). Settlement (fills, lapses, corrections) lives in settlement.py."""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Awaitable
from dataclasses import dataclass

from rfqkit.maker_protocol import Released, ReleaseReason
from simulator.clock import Clock
from simulator.errors import Conflict, InvalidRequest, NotFound, ServiceError, VenueUnavailable
from simulator.randomness import RandomSource, secret_token
from simulator.services.access.callers import Caller
from simulator.services.access.proofs import TakerProof
from simulator.services.rfq.answers import PreviewAnswer, RequestOutcome, ReservedElsewhere
from simulator.services.rfq.archived import taken_over
from simulator.services.rfq.auction import Auction
from simulator.services.rfq.deps import RfqDeps
from simulator.services.rfq.model import QuoteState, StoredRfq
from simulator.services.rfq.ports import RfqStore
from simulator.services.rfq.pricing import LadderView, eligible_makers
from simulator.services.rfq.trades import TradeRequest, TradeSpec, validate_trade
from simulator.services.rfq.transactions import for_quote
from simulator.services.shared.amounts import rate_ray
from simulator.services.shared.venue import ChainVenue

# A taker balance read ahead of the outstanding slot's check is used if the check took at most
# this long (it did not wait for the owner's auctions); else it is read again.
BALANCE_READ_AHEAD_S = 0.05

log = logging.getLogger("rfqsim.rfq")


@dataclass(frozen=True)
class FirmRequest:
    trade: TradeRequest
    taker: str
    proof: TakerProof | None


def _claim_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class RfqService:
    def __init__(
        self,
        clock: Clock,
        random: RandomSource,
        deps: RfqDeps,
        auction: Auction,
        store: RfqStore,
    ) -> None:
        self._clock = clock
        self._random = random
        self._deps = deps
        self._auction = auction
        self._store = store  # every RFQ record and the order index fills find them by
        self._history = deps.history  # the RFQs' timelines (GET /_sim/rfqs)

    # --- public, keyless ---------------------------------------------------------------

    def ladder(self, chain_id: int) -> LadderView:
        chain = self._deps.venue.chain(chain_id)
        if chain is None:
            raise InvalidRequest(
                f"No RFQ corridor on chain {chain_id}",
                details={"reason": "corridor_unavailable", "chainId": chain_id},
            )
        return self._deps.pricing.ladder(chain)

    async def preview(self, trade: TradeRequest) -> PreviewAnswer:
        spec = validate_trade(self._deps.venue, trade)
        outcome = self._deps.pricing.preview(spec)
        if outcome.price is not None:
            return PreviewAnswer.of(spec, outcome, ReservedElsewhere())
        until = await self._reserved_until(spec, None)
        return PreviewAnswer.of(spec, outcome, ReservedElsewhere.at(self._clock.time(), until))

    # --- firm request ------------------------------------------------------------------

    async def request(self, caller: Caller, body: FirmRequest) -> RequestOutcome:
        deps = self._deps
        if deps.faults.venue_paused:
            raise VenueUnavailable("Quotes are briefly not served; retry")
        spec = validate_trade(deps.venue, body.trade)
        caller.require_chain_environment(spec.chain.chain_id, spec.chain.environment)
        if caller.key is None:
            # Before any maker is asked or inventory locked (401 proof_of_control_*).
            await deps.proofs.authorize(
                taker=body.taker,
                chain_id=spec.chain.chain_id,
                proof=body.proof,
                caller=caller.identity,
            )
        aggregator = caller.has_scope("rfq:aggregator")
        cap = (
            deps.limits().outstanding_aggregator
            if aggregator
            else deps.limits().outstanding_default
        )
        timing = spec.corridor.timing
        rfq_id = self._random.new_id("rfq")
        # Exact input: the taker's balance is read while the outstanding slot is taken (a
        # chain read and, of several instances, an engine round trip at once).
        exact_input = spec.sell_amount is not None and not aggregator
        balance = (
            deps.funds.read_ahead(spec.chain.chain_id, spec.sell.address, body.taker)
            if exact_input
            else None
        )
        asked = self._clock.monotonic()
        try:
            # 429 over the cap (after the owner's running auctions end: nextSlotFreeAt known)
            await deps.slots.acquire(
                caller.identity, rfq_id, cap, hold_s=timing.reply_budget_ms / 1000 + 5
            )
        except BaseException:
            if balance is not None:
                balance.cancel()
            raise
        if balance is not None and self._clock.monotonic() - asked > BALANCE_READ_AHEAD_S:
            balance.cancel()  # the slot was waited for: read again at the check
            balance = None
        now = self._clock.time()
        reply_by = now + timing.reply_budget_ms / 1000
        claim_token = secret_token("rfqc_")
        record = StoredRfq(
            rfq_id=rfq_id,
            chain_id=spec.chain.chain_id,
            sell_token=spec.sell.address,
            buy_token=spec.buy.address,
            requested_sell=spec.sell_amount,
            requested_buy=spec.buy_amount,
            taker=body.taker,
            owner=caller.identity,
            partner_id=caller.partner_id,
            claim_hash=_claim_hash(claim_token),
            created_at=now,
            reply_by=reply_by,
            quote_ttl_ms=timing.quote_ttl_s * 1000,
        )
        history = self._history
        started = self._clock.monotonic()

        def since(moment: float) -> float:
            return (self._clock.monotonic() - moment) * 1000

        history.received(
            rfq_id,
            caller=caller.identity,
            chain_id=spec.chain.chain_id,
            sell_token=spec.sell.address,
            buy_token=spec.buy.address,
            sell_amount=spec.sell_amount,
            buy_amount=spec.buy_amount,
            taker=body.taker,
            preferred=list(spec.preferred),
            restricted=list(spec.restricted),
            reply_budget_ms=timing.reply_budget_ms,
            head_start_ms=timing.preferred_wait_ms,
        )
        try:
            if exact_input:
                # Exact input: checked before makers are woken, against the gross cap.
                assert spec.sell_amount is not None
                await deps.funds.reserve_checked(
                    rfq_id,
                    spec.chain.chain_id,
                    body.taker,
                    spec.sell.address,
                    spec.sell_amount,
                    reply_by + 5,
                    balance=balance,
                )
            self._store.add(record)  # soliciting
            claimed = deps.owners.claim(rfq_id)  # confirmed while the makers answer
            outcome = await self._auction.run(
                spec, rfq_id, body.taker, reply_by, now + timing.quote_ttl_s, caller.identity
            )
            await claimed  # before any answer names the RFQ: every instance finds it
            record.routing = outcome.routing
            if not outcome.orders:
                record.status = "no_quote"
                record.no_quote_reason = outcome.reason or "no_valid_quote"
                record.available_sell = outcome.depth.sell or None
                record.available_buy = outcome.depth.buy or None
                reservation = ReservedElsewhere.at(
                    self._clock.time(), await self._reserved_until(spec, caller.identity)
                )
                record.reserved_until = reservation.reserved_until
                self._release_everything(rfq_id)
                history.responded(rfq_id, "no_quote", outcome.reason, since(started), None)
                await self._keep(record)
                return RequestOutcome(
                    record,
                    claim_token,
                    outcome.maker_wait_s,
                    outcome.maker_waits_s,
                    retry_after_ms=reservation.retry_after_ms,
                )
            taker_pays = sum(o.taker_pays for o in outcome.orders)
            buy_amount = sum(o.maker_gives for o in outcome.orders)
            quote = QuoteState(
                orders=outcome.orders,
                expires_at=min(min(o.expires_at for o in outcome.orders), now + timing.quote_ttl_s),
                order_deadline=min(o.deadline for o in outcome.orders),
                latest_order_deadline=max(o.deadline for o in outcome.orders),
                sell_amount=spec.sell_amount if spec.sell_amount is not None else taker_pays,
                rate_ray=rate_ray(taker_pays, spec.sell.decimals, buy_amount, spec.buy.decimals),
                taker=body.taker,
                reactor=spec.chain.contracts.reactor,
            )
            if spec.buy_amount is not None and not aggregator:
                # Exact output: checked after pricing, against takerPays; on failure the makers'
                # inventory is released before the 400.
                try:
                    await deps.funds.reserve_checked(
                        rfq_id,
                        spec.chain.chain_id,
                        body.taker,
                        spec.sell.address,
                        quote.taker_pays,
                        quote.latest_order_deadline,
                    )
                except Exception:
                    await self._release_makers(rfq_id, "not_selected")
                    raise
            record.quote = quote
            record.status = "quoted"
            self._store.index_orders(record)
            deps.funds.hold(rfq_id, quote.taker_pays, quote.latest_order_deadline)
            deps.slots.extend(rfq_id, quote.latest_order_deadline)
            deps.inventory_extend(rfq_id, quote.expires_at)
            history.amounts(rfq_id, record.sell_amount, record.buy_amount)
            history.responded(rfq_id, "quoted", None, since(started), quote.expires_at)
            await self._keep(record)
            return RequestOutcome(
                record,
                claim_token,
                outcome.maker_wait_s,
                outcome.maker_waits_s,
                transactions=for_quote(spec.chain.chain_id, spec.sell.address, quote),
            )
        except BaseException as failed:
            if record.status == "soliciting":
                self._store.discard(rfq_id)
                self._release_everything(rfq_id)
                # The caller got an error, not an RFQ: the timeline says which.
                code = failed.code if isinstance(failed, ServiceError) else type(failed).__name__
                history.responded(rfq_id, "error", code, since(started), None)
            raise

    def _keep(self, record: StoredRfq) -> Awaitable[None]:
        """A copy of the record as it is now, for the instance that would take it over."""
        live = record.at_rest_since() is None
        return self._deps.owners.keep(record.rfq_id, self._store.copy(record), live)

    async def adopt(self, rfq_id: str, holder: int) -> StoredRfq | None:
        """Several instances: the RFQ `holder` (gone) held is this instance's from now, from
        its last copy; None when another instance took it over first, or none was kept."""
        copy = await self._deps.owners.take_over(rfq_id, holder)
        if copy is None:
            return None
        record = self._store.adopt(taken_over(copy))
        self._history.taken_over(record, holder)
        log.info("RFQ %s taken over from instance %d", rfq_id, holder)
        return record

    def _release_everything(self, rfq_id: str) -> None:
        self._deps.slots.release(rfq_id)
        self._deps.funds.release(rfq_id)
        self._deps.inventory.release_rfq(rfq_id)

    async def _release_makers(self, rfq_id: str, reason: ReleaseReason) -> None:
        for hold in self._deps.inventory.release_rfq(rfq_id):
            await self._deps.makers.notify(
                hold.maker,
                self.chain(hold.chain_id).environment,
                Released(quote_id=hold.quote_id, rfq_id=rfq_id, reason=reason),
            )

    async def _reserved_until(self, spec: TradeSpec, exclude_owner: str | None) -> float | None:
        """When another caller's live firm quote holds liquidity in the same direction (and a
        maker inside the restricted list, if any): the earliest time it lapses (of several
        instances, their quotes count too)."""
        # Only liquidity that could have served this request counts: held by a maker that is
        # online and eligible now (inside the restricted list, if one was given). With nobody
        # online the book is genuinely empty, and retrying later would not help.
        eligible = {m.wallet_key for m in eligible_makers(self._deps.makers, spec)}
        return await self._deps.inventory.earliest_end(
            spec.chain.chain_id, spec.sell.address, spec.buy.address, eligible, exclude_owner
        )

    def chain(self, chain_id: int) -> ChainVenue:
        chain = self._deps.venue.chain(chain_id)
        assert chain is not None, "records only exist for configured chains"
        return chain

    # --- lifecycle ---------------------------------------------------------------------

    def owned(self, rfq_id: str, caller: Caller, claim_token: str | None) -> StoredRfq:
        """Ownership-scoped lookup: the claim token, or any key of the creating partner.
        Anything else — unknown id, wrong token, foreign partner — is the same 404."""
        record = self._store.get(rfq_id)
        if record is not None:
            if claim_token is not None and hmac.compare_digest(
                record.claim_hash, _claim_hash(claim_token)
            ):
                return record
            if caller.partner_id is not None and caller.partner_id == record.partner_id:
                return record
        raise NotFound("No such RFQ for this caller")

    async def cancel(self, record: StoredRfq) -> None:
        if record.status != "quoted" or record.cancelled or self._lapsed(record):
            raise Conflict(
                f"Only a quoted RFQ can be cancelled; this one is {self._visible_status(record)}",
                details={"reason": "not_quoted", "status": self._visible_status(record)},
            )
        record.cancelled = True
        self._history.step(record.rfq_id, "cancelled")
        await self._keep(record)
        # The makers' reservation is dropped; the slot stays held until latestOrderDeadline and
        # the signed orders are not revoked.
        await self._release_makers(record.rfq_id, "cancelled")

    def submit(self, record: StoredRfq, tx_hash: str) -> None:
        tx_hash = tx_hash.lower()
        if record.tx_hash is not None:
            if record.tx_hash == tx_hash:
                return  # idempotent on the same hash, whatever the status is now
            raise Conflict(
                "A different transaction hash was already reported for this RFQ",
                details={"reason": "tx_hash_mismatch"},
            )
        if record.status != "quoted" or self._lapsed(record):
            raise Conflict(
                f"Submit is accepted only before expiresAt on a quoted RFQ; this one is "
                f"{self._visible_status(record)}",
                details={"reason": "not_submittable", "status": self._visible_status(record)},
            )
        record.tx_hash = tx_hash
        record.submitted_at = self._clock.time()
        record.status = "submitted"
        self._store.track_submitted(record)
        self._keep(record)  # sent at once (submit does not wait)
        self._history.step(record.rfq_id, "submitted", tx_hash)
        self._history.status(record.rfq_id, "submitted", "the taker reported its transaction")

    def _lapsed(self, record: StoredRfq) -> bool:
        return record.quote is not None and self._clock.time() >= record.quote.expires_at

    def _visible_status(self, record: StoredRfq) -> str:
        return record.status
