"""Typed messages of the maker stream (`/v2/maker/stream`), both directions, as in
docs/maker-protocol.md.

Attributes are the wire names in snake_case (`rfq.maker_receives` is `makerReceives` in the
document); the camelCase comes from the one alias generator (rfqkit/wire.py). Amounts travel as
base-10 strings and are `int` in Python (a JSON number is accepted too when parsing); addresses
are 0x-hex strings; times are Unix milliseconds (`…_ms`).

Server messages tolerate unknown extra fields (the server may add some); maker messages forbid
them, so a typo in what we send is caught before it leaves.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from contracts.orders import RfqOrder
from rfqkit import json_text
from rfqkit.wire import WIRE_ONLY, WireModel

UINT256_MAX = 2**256 - 1
MAX_LEVELS = 9

# `[0-9]`, never `\d`: `\d` also matches non-ASCII digits.
_AMOUNT = re.compile(r"^(0|[1-9][0-9]{0,77})$")
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_HEX_BYTES = re.compile(r"^0x([0-9a-fA-F]{2})+$")


class ProtocolError(ValueError):
    """A frame that is not a valid message of the protocol (bad JSON, unknown `type`, a field
    that breaks the schema). `issues` lists pydantic's complaints when there are any."""

    def __init__(self, message: str, issues: list[str] | None = None) -> None:
        super().__init__(message)
        self.issues = issues or []


def _amount(value: object) -> int:
    if isinstance(value, bool):
        raise ValueError("an amount is a base-10 string, not a boolean")
    if isinstance(value, str):
        if not _AMOUNT.match(value):
            raise ValueError(f"amount {value!r} is not a base-10 integer string")
        number = int(value)
    elif isinstance(value, int):
        number = value
    else:
        raise ValueError(f"an amount is a base-10 string, got {type(value).__name__}")
    if not 0 <= number <= UINT256_MAX:
        raise ValueError(f"amount {number} is outside [0, 2**256)")
    return number


def is_address(value: object) -> bool:
    """Whether `value` is a 0x-prefixed 20-byte hex address (any case), as the schema says."""
    return isinstance(value, str) and _ADDRESS.match(value) is not None


def _address(value: object) -> str:
    if not isinstance(value, str) or not is_address(value):
        raise ValueError(f"{value!r} is not a 0x-prefixed 20-byte hex address")
    return value


def _hex_bytes(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        value = "0x" + bytes(value).hex()
    if not isinstance(value, str) or not _HEX_BYTES.match(value):
        raise ValueError(f"{value!r} is not 0x-prefixed hex bytes")
    return value


Amount = Annotated[int, BeforeValidator(_amount), PlainSerializer(str, return_type=str)]
"""uint256 amount: `int` in Python, a base-10 string on the wire."""
Address = Annotated[str, BeforeValidator(_address)]
HexBytes = Annotated[str, BeforeValidator(_hex_bytes)]
TimeMs = Annotated[int, Field(ge=0)]
PingId = str | int  # the document does not type ping ids: echo whatever came, unchanged

Kind = Literal["exact_input", "exact_output"]
Environment = Literal["live", "test"]
ReleaseReason = Literal["not_selected", "cancelled", "late", "invalid"]
DeclineReason = Literal["liquidity", "min_size", "rejected", "unavailable"]
# Close codes of the stream (docs/maker-protocol.md "Closing").
CLOSE_GOING_AWAY = 1001  # `server_stopping`
CLOSE_REPLACED = 4001  # `replaced`: another connection of the same maker took over
CLOSE_PING_TIMEOUT = 4002  # `ping_timeout`: two pings in a row unanswered
CLOSE_CREDENTIAL_WITHDRAWN = 4003  # `credential_suspended` / `credential_revoked`

ERROR_CODES = ("bad_message", "unknown_type", "unknown_quote", "too_frequent", "unknown_pair")


class _ServerModel(WireModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _MakerModel(WireModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---- server -> maker ----------------------------------------------------------------------


class WelcomePair(_ServerModel):
    """One RFQ corridor direction: the taker sells `sellToken`, the maker gives `buyToken`."""

    sell_token: Address
    buy_token: Address
    sell_decimals: int = Field(ge=0, le=77)
    buy_decimals: int = Field(ge=0, le=77)
    fee_bps: int = Field(ge=0, le=10_000)
    reply_budget_ms: TimeMs
    quote_ttl_ms: TimeMs


class WelcomeChain(_ServerModel):
    chain_id: int = Field(gt=0)
    reactor: Address
    signature_transfer: Address
    fee_recipient: Address
    pairs: list[WelcomePair]
    # v1 BOOK corridors (both directions): never asked for quotes; a filling operator publishes
    # its standing bid for resting orders there. Absent from older servers.
    book_pairs: list[WelcomePair] = Field(default_factory=list)

    def pair(self, sell_token: str, buy_token: str) -> WelcomePair | None:
        """The corridor direction selling `sell_token` for `buy_token` (any address case)."""
        sell, buy = sell_token.lower(), buy_token.lower()
        for pair in self.pairs:
            if pair.sell_token.lower() == sell and pair.buy_token.lower() == buy:
                return pair
        return None


class Welcome(_ServerModel):
    type: Literal["welcome"] = "welcome"
    maker_id: str
    wallet: Address
    environment: Environment
    server_time_ms: TimeMs
    levels_min_interval_ms: TimeMs
    levels_max_age_ms: TimeMs
    ping_interval_ms: int = Field(gt=0)
    chains: list[WelcomeChain]

    def chain(self, chain_id: int) -> WelcomeChain | None:
        return next((c for c in self.chains if c.chain_id == chain_id), None)


class Rfq(_ServerModel):
    """A firm request. `exact_input`: `makerReceives` and `feeAmount` are fixed, choose
    `makerGives`. `exact_output`: `makerGives` is fixed, choose `makerReceives`; the fee is then
    `makerReceives * feeBps // 10000`."""

    type: Literal["rfq"] = "rfq"
    quote_id: str
    rfq_id: str
    chain_id: int = Field(gt=0)
    sell_token: Address
    buy_token: Address
    kind: Kind
    maker_receives: Amount | None = None
    fee_amount: Amount | None = None
    maker_gives: Amount | None = None
    fee_bps: int = Field(ge=0, le=10_000)
    taker: Address
    reactor: Address
    signature_transfer: Address
    reply_by_ms: TimeMs
    min_expires_at_ms: TimeMs
    max_expires_at_ms: TimeMs

    @model_validator(mode="after")
    def _fixed_side_present(self) -> Rfq:
        if self.kind == "exact_input" and (self.maker_receives is None or self.fee_amount is None):
            raise ValueError("an exact_input rfq carries makerReceives and feeAmount")
        if self.kind == "exact_output" and self.maker_gives is None:
            raise ValueError("an exact_output rfq carries makerGives")
        if self.min_expires_at_ms > self.max_expires_at_ms:
            raise ValueError("minExpiresAtMs is after maxExpiresAtMs")
        return self


class Filled(_ServerModel):
    type: Literal["filled"] = "filled"
    quote_id: str
    rfq_id: str
    chain_id: int
    order_hash: HexBytes
    tx_hash: HexBytes
    maker_gave: Amount
    maker_received: Amount
    fee_amount: Amount


class Expired(_ServerModel):
    type: Literal["expired"] = "expired"
    quote_id: str
    rfq_id: str


class Released(_ServerModel):
    type: Literal["released"] = "released"
    quote_id: str
    # null when reason is `late`: the answer named a quoteId the server no longer (or never)
    # waited for, so it cannot say which rfq it belonged to (docs/maker-protocol.md).
    rfq_id: str | None
    reason: ReleaseReason
    detail: str | None = Field(default=None, exclude_if=lambda v: v is None)


class ErrorMessage(_ServerModel):
    """`{"type": "error", "code", "message", "ref"}`: one of our messages was refused. `code`
    is one of ERROR_CODES (kept a plain string so a new code is still delivered)."""

    type: Literal["error"] = "error"
    code: str
    message: str = ""
    ref: str | None = None


# ---- either direction ---------------------------------------------------------------------


class Ping(_ServerModel):
    type: Literal["ping"] = "ping"
    id: PingId


class Pong(_ServerModel):
    type: Literal["pong"] = "pong"
    id: PingId


# ---- maker -> server ----------------------------------------------------------------------


class Level(_MakerModel):
    """A taker selling `sellAmount` (before the fee) receives `buyAmount` from the maker."""

    sell_amount: Amount
    buy_amount: Amount


class Levels(_MakerModel):
    type: Literal["levels"] = "levels"
    chain_id: int = Field(gt=0)
    sell_token: Address
    buy_token: Address
    levels: list[Level] = Field(max_length=MAX_LEVELS)

    @model_validator(mode="after")
    def _increasing(self) -> Levels:
        # Strictly increasing on both sides: the document says sellAmount "strictly increasing
        # and buyAmount increasing with it"; equal buy amounts would be a flat (free) segment.
        previous: Level | None = None
        for level in self.levels:
            if level.sell_amount <= 0 or level.buy_amount <= 0:
                raise ValueError("level amounts must be positive")
            if previous is not None and (
                level.sell_amount <= previous.sell_amount or level.buy_amount <= previous.buy_amount
            ):
                raise ValueError("levels must increase strictly in sellAmount and buyAmount")
            previous = level
        return self


class OrderTerms(_MakerModel):
    """The reactor's RfqOrder as JSON: `inputToken` is what the maker gives (the rfq's
    `buyToken`), `outputToken` what it receives (the rfq's `sellToken`); `deadline` in seconds."""

    reactor: Address
    maker: Address
    taker: Address
    input_token: Address
    input_amount: Amount
    output_token: Address
    output_amount: Amount
    fee_amount: Amount
    nonce: Amount
    deadline: Amount

    @classmethod
    def from_order(cls, order: RfqOrder) -> OrderTerms:
        return cls.model_validate(order.to_message())

    def to_order(self) -> RfqOrder:
        fields = type(self).model_fields.items()
        return RfqOrder(**{info.alias or name: getattr(self, name) for name, info in fields})


class MakerQuote(_MakerModel):
    type: Literal["quote"] = "quote"
    quote_id: str
    expires_at_ms: TimeMs
    order: OrderTerms
    signature: HexBytes


class Decline(_MakerModel):
    type: Literal["decline"] = "decline"
    quote_id: str
    reason: DeclineReason
    max_sell_amount: Amount | None = Field(default=None, exclude_if=lambda v: v is None)


ServerMessage: TypeAlias = Annotated[
    Welcome | Rfq | Filled | Expired | Released | ErrorMessage | Ping | Pong,
    Field(discriminator="type"),
]
MakerMessage: TypeAlias = Annotated[
    Levels | MakerQuote | Decline | Ping | Pong, Field(discriminator="type")
]
Message: TypeAlias = (
    Welcome
    | Rfq
    | Filled
    | Expired
    | Released
    | ErrorMessage
    | Ping
    | Pong
    | Levels
    | MakerQuote
    | Decline
)

_SERVER_ADAPTER: TypeAdapter[ServerMessage] = TypeAdapter(ServerMessage)
_MAKER_ADAPTER: TypeAdapter[MakerMessage] = TypeAdapter(MakerMessage)
SERVER_TYPES = frozenset(
    {"welcome", "rfq", "filled", "expired", "released", "error", "ping", "pong"}
)
MAKER_TYPES = frozenset({"levels", "quote", "decline", "ping", "pong"})


def _load(data: str | bytes | dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    if isinstance(data, dict):
        obj: object = data
    else:
        try:
            obj = json_text.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProtocolError(f"frame is not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise ProtocolError("a message is one JSON object")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("message has no string `type`")
    if kind not in known:
        raise ProtocolError(f"unknown message type {kind!r}")
    return obj


def _issues(exc: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]


def parse_server_message(data: str | bytes | dict[str, Any]) -> ServerMessage:
    """Parse one server -> maker frame; ProtocolError if it is not a valid message."""
    obj = _load(data, SERVER_TYPES)
    try:
        return _SERVER_ADAPTER.validate_python(obj, **WIRE_ONLY)
    except ValidationError as exc:
        raise ProtocolError(f"invalid {obj['type']} message", _issues(exc)) from exc


def parse_maker_message(data: str | bytes | dict[str, Any], *, venue: bool = False) -> MakerMessage:
    """Parse one maker -> server frame (what a server, or a test double of one, receives).

    `venue=True` is how the simulator reads the maker stream: every field must have its JSON
    type exactly (the string "97" is not a chain id; amounts stay strings or integers), and
    fields it does not know are ignored, so a bot written against a newer document keeps
    working. By default fields are coerced and unknown ones refused, as when we send."""
    obj = _load(data, MAKER_TYPES)
    try:
        if venue:
            return _MAKER_ADAPTER.validate_python(obj, strict=True, extra="ignore", **WIRE_ONLY)
        return _MAKER_ADAPTER.validate_python(obj, **WIRE_ONLY)
    except ValidationError as exc:
        raise ProtocolError(f"invalid {obj['type']} message", _issues(exc)) from exc


def to_wire(message: Message) -> dict[str, Any]:
    """The message as the JSON object that goes on the wire (amounts as strings; optional
    fields the document marks with `?` are left out when unset)."""
    return message.model_dump(mode="json")


def serialize(message: Message) -> str:
    """One text frame: `to_wire`'s object as compact JSON, written by pydantic's own serializer
    (a quarter of the time of dumping to a dict and then through the json module; every firm
    request sends one `rfq` per maker and one `released` per maker not chosen). Text outside
    ASCII is written as UTF-8, not as \\u escapes: the same JSON value."""
    return message.model_dump_json()
