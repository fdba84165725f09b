"""RFQ events (spec 1-rfq-v2 "Events"): built here from the record, handed to the outbox that
the webhook delivery engine drains. Bodies follow the spec field for field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from simulator.clock import isoformat_unix
from simulator.services.rfq.model import RfqRecord

EventType = Literal["rfq.filled", "rfq.failed", "rfq.expired"]
RFQ_EVENT_TYPES: tuple[EventType, ...] = ("rfq.filled", "rfq.failed", "rfq.expired")


@dataclass(frozen=True)
class Event:
    id: str  # <type>:<rfq id>: stable, the receivers' dedupe key
    type: str
    created: float  # simulator time
    partner_id: str | None  # only this partner's endpoints receive it (None: nobody)
    body: dict[str, Any]


class EventSink(Protocol):
    def publish(self, event: Event) -> None: ...


@dataclass
class EventLog:
    """Every event emitted, in order (the outbox's source of truth)."""

    events: list[Event] = field(default_factory=list)
    subscribers: list[EventSink] = field(default_factory=list)

    def publish(self, event: Event) -> None:
        self.events.append(event)
        for subscriber in self.subscribers:
            subscriber.publish(event)


def rfq_event(event_type: EventType, record: RfqRecord, created: float) -> Event:
    sell, buy, fee = record_amounts(record)
    rfq: dict[str, Any] = {
        "id": record.rfq_id,
        "chainId": record.chain_id,
        "sellToken": record.sell_token,
        "buyToken": record.buy_token,
        "sellAmount": sell,
        "buyAmount": buy,
        "feeAmount": fee,
        "taker": record.taker,
        "txHash": record.tx_hash,
        "filledAt": isoformat_unix(record.filled_at),
        "failReason": record.fail_reason if event_type != "rfq.filled" else None,
    }
    if event_type == "rfq.filled":
        rfq["late"] = record.late
        rfq["supersedes"] = record.superseded and f"rfq.{record.superseded}"
        rfq["previousFailReason"] = record.previous_fail_reason
    body = {
        "id": f"{event_type}:{record.rfq_id}",
        "type": event_type,
        "created": isoformat_unix(created),
        "data": {"apiVersion": 2, "rfq": rfq},
    }
    return Event(
        id=str(body["id"]),
        type=event_type,
        created=created,
        partner_id=record.partner_id,
        body=body,
    )


def record_amounts(record: RfqRecord) -> tuple[str | None, str | None, str | None]:
    """(sellAmount, buyAmount, feeAmount) as the record shows them: settled once filled, the
    winner's quote once quoted, else the request echoed (spec: "before a winner exists they
    echo the request"); a side the request did not name is null."""
    if record.settled_sell is not None:
        return str(record.settled_sell), str(record.settled_buy), str(record.settled_fee)
    if record.quote is not None:
        quote = record.quote
        return str(quote.taker_pays), str(quote.buy_amount), str(quote.fee_amount)

    def echo(value: int | None) -> str | None:
        return str(value) if value is not None else None

    return echo(record.requested_sell), echo(record.requested_buy), None
