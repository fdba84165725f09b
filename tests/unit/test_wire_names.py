"""Wire names come from one alias generator (rfqkit/wire.py): Python code writes snake_case,
the wire carries camelCase, and what arrives from the wire is read by its wire names only, so a
body that spells a field the Python way is an unknown field, as it was before the aliases."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from rfqkit.maker_protocol import Decline, ProtocolError, parse_maker_message, serialize
from rfqkit.wire import WIRE_ONLY
from simulator.api.rfq.schemas import PreviewBody, Routing
from simulator.api.webhooks.schemas import DeliveryView

TOKEN_A = "0x" + "11" * 20
TOKEN_B = "0x" + "22" * 20


def test_a_body_is_read_by_its_camel_case_names() -> None:
    body = PreviewBody.model_validate_json(
        json.dumps({"chainId": 97, "sellToken": TOKEN_A, "buyToken": TOKEN_B, "sellAmount": "5"}),
        **WIRE_ONLY,
    )
    assert (body.chain_id, body.sell_amount) == (97, "5")


def test_the_python_spelling_of_a_field_is_an_unknown_field_on_the_wire() -> None:
    raw = {"chain_id": 97, "sellToken": TOKEN_A, "buyToken": TOKEN_B, "sellAmount": "5"}
    with pytest.raises(ValidationError) as caught:
        PreviewBody.model_validate_json(json.dumps(raw), **WIRE_ONLY)
    problems = {(e["loc"], e["type"]) for e in caught.value.errors()}
    assert problems == {(("chainId",), "missing"), (("chain_id",), "extra_forbidden")}


def test_a_maker_frame_is_read_by_its_camel_case_names_only() -> None:
    frame = {"type": "decline", "quote_id": "mq_1", "reason": "liquidity"}
    with pytest.raises(ProtocolError):
        parse_maker_message(frame)
    assert parse_maker_message({**frame, "quoteId": "mq_1"}, venue=True) == Decline(
        quote_id="mq_1", reason="liquidity"
    )


def test_dumps_write_wire_names() -> None:
    routing = Routing(
        preference_applied=True,
        restriction_applied=False,
        fallback_used=False,
        target_maker_wallets=[],
        preferred_quotes_received=1,
        open_market_quotes_received=0,
    )
    assert list(routing.model_dump()) == [
        "preferenceApplied",
        "restrictionApplied",
        "fallbackUsed",
        "targetMakerWallets",
        "preferredQuotesReceived",
        "openMarketQuotesReceived",
    ]
    assert json.loads(serialize(Decline(quote_id="mq_2", reason="min_size"))) == {
        "type": "decline",
        "quoteId": "mq_2",
        "reason": "min_size",
    }


def test_the_control_api_keeps_its_snake_case_names() -> None:
    assert "endpoint_id" in DeliveryView.model_json_schema()["properties"]
