"""Message models of docs/maker-protocol.md: the document's examples parse, what we send
serialises with the exact field names, and invalid frames are refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contracts.orders import RfqOrder
from rfqkit.maker_protocol import (
    Decline,
    ErrorMessage,
    Expired,
    Filled,
    Level,
    Levels,
    MakerQuote,
    OrderTerms,
    Ping,
    Pong,
    ProtocolError,
    Released,
    Rfq,
    Welcome,
    parse_maker_message,
    parse_server_message,
    serialize,
    to_wire,
)

A = {name: "0x" + digit * 40 for name, digit in zip("rsfabt", "123456", strict=True)}

WELCOME: dict[str, Any] = {
    "type": "welcome",
    "makerId": "tx_live_3f2a9c1b7e04",
    "wallet": A["t"],
    "environment": "live",
    "serverTimeMs": 1795500000000,
    "levelsMinIntervalMs": 400,
    "levelsMaxAgeMs": 10000,
    "pingIntervalMs": 15000,
    "chains": [
        {
            "chainId": 56,
            "reactor": A["r"],
            "signatureTransfer": A["s"],
            "feeRecipient": A["f"],
            "pairs": [
                {
                    "sellToken": A["a"],
                    "buyToken": A["b"],
                    "sellDecimals": 18,
                    "buyDecimals": 6,
                    "feeBps": 5,
                    "replyBudgetMs": 750,
                    "quoteTtlMs": 60000,
                }
            ],
            "bookPairs": [],
        }
    ],
}
RFQ: dict[str, Any] = {
    "type": "rfq",
    "quoteId": "mq_1",
    "rfqId": "rfq_1",
    "chainId": 56,
    "sellToken": A["a"],
    "buyToken": A["b"],
    "kind": "exact_input",
    "makerReceives": "1000000000000000000",
    "feeAmount": "500000000000000",
    "makerGives": None,
    "feeBps": 5,
    "taker": A["t"],
    "reactor": A["r"],
    "signatureTransfer": A["s"],
    "replyByMs": 1795500000750,
    "minExpiresAtMs": 1795500005750,
    "maxExpiresAtMs": 1795500060000,
}


def test_welcome_example_parses() -> None:
    message = parse_server_message(json.dumps(WELCOME))
    assert isinstance(message, Welcome)
    chain = message.chain(56)
    assert chain is not None
    assert chain.pair(A["a"], A["b"]) is not None
    assert chain.pair(A["b"], A["a"]) is None
    assert message.chain(97) is None
    assert to_wire(message) == WELCOME
    # A server that does not send bookPairs (an older one) still parses: no book pairs.
    older = {
        **WELCOME,
        "chains": [{k: v for k, v in WELCOME["chains"][0].items() if k != "bookPairs"}],
    }
    parsed = parse_server_message(json.dumps(older))
    assert isinstance(parsed, Welcome)
    assert parsed.chains[0].book_pairs == []


def test_rfq_example_parses_with_int_amounts_and_round_trips() -> None:
    message = parse_server_message(json.dumps(RFQ).encode())
    assert isinstance(message, Rfq)
    assert message.maker_receives == 10**18
    assert message.fee_amount == 5 * 10**14
    assert message.maker_gives is None
    assert json.loads(serialize(message)) == RFQ


def test_exact_output_rfq_needs_maker_gives() -> None:
    body = {**RFQ, "kind": "exact_output", "makerReceives": None, "feeAmount": None}
    with pytest.raises(ProtocolError) as caught:
        parse_server_message(body)
    assert any("makerGives" in issue for issue in caught.value.issues)
    ok = parse_server_message({**body, "makerGives": "1600000000"})
    assert isinstance(ok, Rfq)
    assert ok.maker_gives == 1_600_000_000


@pytest.mark.parametrize(
    "message",
    [
        Filled(
            quote_id="mq_1",
            rfq_id="rfq_1",
            chain_id=56,
            order_hash="0x" + "ab" * 32,
            tx_hash="0x" + "cd" * 32,
            maker_gave=1,
            maker_received=2,
            fee_amount=3,
        ),
        Expired(quote_id="mq_1", rfq_id="rfq_1"),
        Released(quote_id="mq_1", rfq_id="rfq_1", reason="not_selected"),
        Released(quote_id="mq_1", rfq_id="rfq_1", reason="invalid", detail="nonce"),
        ErrorMessage(code="unknown_quote", message="no such quote", ref="mq_9"),
        Ping(id=7),
        Pong(id="x"),
    ],
)
def test_server_messages_round_trip(message: Any) -> None:
    assert parse_server_message(serialize(message)) == message


def test_wire_names_and_optional_fields() -> None:
    assert to_wire(Released(quote_id="q", rfq_id="r", reason="late")) == {
        "type": "released",
        "quoteId": "q",
        "rfqId": "r",
        "reason": "late",
    }
    assert to_wire(Decline(quote_id="q", reason="unavailable")) == {
        "type": "decline",
        "quoteId": "q",
        "reason": "unavailable",
    }
    assert to_wire(Decline(quote_id="q", reason="liquidity", max_sell_amount=10**18)) == {
        "type": "decline",
        "quoteId": "q",
        "reason": "liquidity",
        "maxSellAmount": "1000000000000000000",
    }
    levels = Levels(
        chain_id=56,
        sell_token=A["a"],
        buy_token=A["b"],
        levels=[Level(sell_amount=10**18, buy_amount=1_590_000)],
    )
    assert to_wire(levels) == {
        "type": "levels",
        "chainId": 56,
        "sellToken": A["a"],
        "buyToken": A["b"],
        "levels": [{"sellAmount": "1000000000000000000", "buyAmount": "1590000"}],
    }
    assert parse_maker_message(serialize(levels)) == levels


def test_quote_carries_the_order_and_converts_back() -> None:
    order = RfqOrder(
        reactor=A["r"],
        maker=A["t"],
        taker=A["t"],
        inputToken=A["b"],
        inputAmount=1_590_000,
        outputToken=A["a"],
        outputAmount=10**18,
        feeAmount=5 * 10**14,
        nonce=2**247 + 1,
        deadline=1795500090,
    )
    quote = MakerQuote(
        quote_id="mq_1",
        expires_at_ms=1795500030000,
        order=OrderTerms.from_order(order),
        signature="0x" + "ee" * 65,
    )
    wire = to_wire(quote)
    assert list(wire) == ["type", "quoteId", "expiresAtMs", "order", "signature"]
    assert list(wire["order"]) == [
        "reactor",
        "maker",
        "taker",
        "inputToken",
        "inputAmount",
        "outputToken",
        "outputAmount",
        "feeAmount",
        "nonce",
        "deadline",
    ]
    assert wire["order"]["nonce"] == str(2**247 + 1)
    assert wire["order"]["deadline"] == "1795500090"
    parsed = parse_maker_message(serialize(quote))
    assert isinstance(parsed, MakerQuote)
    assert parsed.order.to_order() == order


def test_released_for_a_late_answer_carries_a_null_rfq_id() -> None:
    # The server answers a quote or decline for an unknown or closed quoteId with exactly this
    # frame (docs/maker-protocol.md: "`rfqId` is then null"); the client must accept it.
    frame = '{"type":"released","quoteId":"mq_gone","rfqId":null,"reason":"late"}'
    message = parse_server_message(frame)
    assert message == Released(quote_id="mq_gone", rfq_id=None, reason="late")
    assert serialize(message) == frame


@pytest.mark.parametrize(
    ("frame", "match"),
    [
        ("not json", "not JSON"),
        ("[1]", "one JSON object"),
        ('{"id": 1}', "no string `type`"),
        ('{"type": "hello"}', "unknown message type"),
        (json.dumps({**RFQ, "makerReceives": "01"}), "invalid rfq"),
        (json.dumps({**RFQ, "makerReceives": "١٢"}), "invalid rfq"),  # non-ASCII digits
        (json.dumps({**RFQ, "makerReceives": str(2**256)}), "invalid rfq"),
        (json.dumps({**RFQ, "taker": "0x1234"}), "invalid rfq"),
        (json.dumps({**RFQ, "kind": "exact"}), "invalid rfq"),
        (json.dumps({**RFQ, "minExpiresAtMs": RFQ["maxExpiresAtMs"] + 1}), "invalid rfq"),
        (json.dumps({"type": "released", "quoteId": "q", "rfqId": "r", "reason": "x"}), "invalid"),
    ],
)
def test_bad_server_frames_are_refused(frame: str, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        parse_server_message(frame)


def test_unknown_server_fields_are_tolerated_but_maker_fields_are_not() -> None:
    assert isinstance(parse_server_message({**RFQ, "late": True}), Rfq)
    with pytest.raises(ProtocolError):
        parse_maker_message({"type": "decline", "quoteId": "q", "reason": "liquidity", "x": 1})
    with pytest.raises(ProtocolError):
        parse_maker_message({"type": "rfq"})  # a server message is not a maker message


def test_the_venue_reads_maker_frames_strictly_typed_and_ignores_unknown_fields() -> None:
    body = {"type": "decline", "quoteId": "q", "reason": "liquidity", "maxSellAmount": "5"}
    assert parse_maker_message({**body, "x": 1}, venue=True) == Decline(
        quote_id="q", reason="liquidity", max_sell_amount=5
    )
    levels = {"type": "levels", "chainId": "56", "sellToken": A["a"], "buyToken": A["b"]}
    assert isinstance(parse_maker_message({**levels, "levels": []}), Levels)  # coerced
    with pytest.raises(ProtocolError, match="invalid levels"):
        parse_maker_message({**levels, "levels": []}, venue=True)


@pytest.mark.parametrize(
    "points",
    [
        [(2, 2), (1, 3)],  # sell not increasing
        [(1, 3), (2, 3)],  # buy not increasing
        [(0, 1)],  # zero
        [(i, i) for i in range(1, 11)],  # ten points
    ],
)
def test_bad_levels_are_refused(points: list[tuple[int, int]]) -> None:
    body = {
        "type": "levels",
        "chainId": 56,
        "sellToken": A["a"],
        "buyToken": A["b"],
        "levels": [{"sellAmount": str(s), "buyAmount": str(b)} for s, b in points],
    }
    with pytest.raises(ProtocolError):
        parse_maker_message(body)


def test_empty_levels_withdraw() -> None:
    levels = Levels(chain_id=56, sell_token=A["a"], buy_token=A["b"], levels=[])
    assert to_wire(levels)["levels"] == []
