"""RFQ events (spec 1-rfq-v2 "Events"): built here from the record and published on the event log
(services/shared/events.py) that the webhook delivery engine drains. Bodies follow the spec
field for field."""

from __future__ import annotations

from typing import Any, Literal

from simulator.clock import isoformat_unix
from simulator.services.rfq.model import RfqRecord
from simulator.services.shared.events import Event

EventType = Literal["rfq.filled", "rfq.failed", "rfq.expired"]
RFQ_EVENT_TYPES: tuple[EventType, ...] = ("rfq.filled", "rfq.failed", "rfq.expired")


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
