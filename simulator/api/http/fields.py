"""Field types shared by the API schemas. Patterns use [0-9], never \\d (which accepts
non-ASCII digits); amounts are also range-checked against 2^256-1 in code."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any

from eth_utils.address import is_checksum_address, to_checksum_address
from pydantic import AfterValidator, BeforeValidator, Field

from rfqkit.timestamps import isoformat_unix

UINT256_MAX = 2**256 - 1
AMOUNT_PATTERN = r"^(0|[1-9][0-9]{0,77})$"
NONZERO_AMOUNT_PATTERN = r"^[1-9][0-9]{0,77}$"
ADDRESS_PATTERN = r"^0x[0-9a-fA-F]{40}$"
BYTES32_PATTERN = r"^0x[0-9a-fA-F]{64}$"
HEX_PATTERN = r"^0x([0-9a-fA-F]{2})*$"
TX_HASH_PATTERN = BYTES32_PATTERN


def _amount_in_range(value: str) -> str:
    if int(value) > UINT256_MAX:
        raise ValueError("amount exceeds 2^256-1")
    return value


def integral_number(value: Any) -> Any:
    # JSON has one number type: 97 and 97.0 are the same value, and JSON Schema 2020-12 (the
    # dialect of OpenAPI 3.1) counts both as "integer". Strict models would refuse the float, so
    # an integral float becomes the int before validation; 97.5, booleans and strings still fail.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@functools.lru_cache(maxsize=8192)
def _valid_address(value: str) -> str:
    # Cached: checksumming costs a keccak, and callers send the same few addresses over and over.
    # All-lowercase and all-uppercase hex carry no checksum: accepted and normalized. Mixed case
    # is an EIP-55 checksum and must be a valid one, as wallets and ethers.js insist: a typo in a
    # checksummed address is refused rather than silently trusted. (eth_utils' is_address does
    # not check the checksum, so it is checked here explicitly.) The pattern has already
    # limited `value` to 0x + 40 hex digits.
    digits = value[2:]
    if digits != digits.lower() and digits != digits.upper() and not is_checksum_address(value):
        raise ValueError("mixed-case address with an invalid EIP-55 checksum")
    return to_checksum_address(value)


def _wallet_list(value: list[str] | str) -> list[str]:
    # Steering lists accept a JSON array or a comma-separated string.
    items = [part.strip() for part in value.split(",")] if isinstance(value, str) else value
    if len(items) > 10:
        raise ValueError("at most 10 wallets")
    return [_valid_address(item) for item in items]


# An integer that also takes integral JSON numbers (97.0), as the schema's "integer" does;
# constraints (ge, le) go on the field as usual.
Integer = Annotated[int, BeforeValidator(integral_number)]
# With constraints in the same Annotated, put the Field before the validator: a Field nested
# around `Integer` renders `ge`/`le` as unknown keywords instead of minimum/maximum.


Amount = Annotated[
    str,
    Field(pattern=AMOUNT_PATTERN, description="Base-10 integer in atomic units, as a string"),
    AfterValidator(_amount_in_range),
]
# An amount that must be more than nothing (what a swap or an order sells): the document says so.
NonZeroAmount = Annotated[
    str,
    Field(
        pattern=NONZERO_AMOUNT_PATTERN,
        description="Base-10 integer in atomic units, as a string, greater than zero",
    ),
    AfterValidator(_amount_in_range),
]
Address = Annotated[
    str,
    Field(pattern=ADDRESS_PATTERN, description="EVM address; lowercase accepted, normalized"),
    AfterValidator(_valid_address),
]
Bytes32 = Annotated[str, Field(pattern=BYTES32_PATTERN, description="0x-prefixed 32-byte hex")]
HexBytes = Annotated[str, Field(pattern=HEX_PATTERN, max_length=20_000)]
TxHash = Annotated[str, Field(pattern=TX_HASH_PATTERN, description="0x-prefixed 32-byte hash")]
_WALLET = r"0x[0-9a-fA-F]{40}"
if TYPE_CHECKING:
    # What a handler reads: the validator below always makes a checksummed list of the JSON
    # array or the comma-separated string the schema accepts.
    WalletList = list[str]
else:
    WalletList = Annotated[
        Annotated[list[Annotated[str, Field(pattern=ADDRESS_PATTERN)]], Field(max_length=10)]
        | Annotated[str, Field(pattern=rf"^ *{_WALLET} *(, *{_WALLET} *){{0,9}}$")],
        Field(
            description="Up to 10 maker funding wallets: a JSON array or a comma-separated string"
        ),
        AfterValidator(_wallet_list),
    ]


# -- what a service's value becomes in a response ------------------------------------------------
# Response models are validated from the services' records (`model_validate(record,
# from_attributes=True)`): each type below turns the service's own value into the text the spec
# writes, so no module maps a record to its wire shape field by field. Each is a plain string in
# the OpenAPI documents.


def _decimal_text(value: object) -> object:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _iso_text(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return isoformat_unix(value)
    return value


def _hex_text(value: object) -> object:
    return "0x" + value.hex() if isinstance(value, bytes) else value


AmountText = Annotated[str, BeforeValidator(_decimal_text)]
"""An integer amount (atomic units, a ray, a nonce) as the base-10 string the wire carries."""
Timestamp = Annotated[str, BeforeValidator(_iso_text)]
"""A service time (Unix seconds) as ISO-8601 UTC with milliseconds (`...T12:00:00.000Z`)."""
HexText = Annotated[str, BeforeValidator(_hex_text)]
"""Bytes as 0x-prefixed hex."""
