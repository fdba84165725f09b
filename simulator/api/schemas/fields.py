"""Field types shared by the API schemas. Patterns use [0-9], never \\d (which accepts
non-ASCII digits); amounts are also range-checked against 2^256-1 in code."""

from __future__ import annotations

import functools
from typing import Annotated

from eth_utils.address import is_address, to_checksum_address
from pydantic import AfterValidator, Field

UINT256_MAX = 2**256 - 1
AMOUNT_PATTERN = r"^(0|[1-9][0-9]{0,77})$"
ADDRESS_PATTERN = r"^0x[0-9a-fA-F]{40}$"
BYTES32_PATTERN = r"^0x[0-9a-fA-F]{64}$"
HEX_PATTERN = r"^0x([0-9a-fA-F]{2})*$"
TX_HASH_PATTERN = BYTES32_PATTERN


def _amount_in_range(value: str) -> str:
    if int(value) > UINT256_MAX:
        raise ValueError("amount exceeds 2^256-1")
    return value


@functools.lru_cache(maxsize=8192)
def _valid_address(value: str) -> str:
    # Cached: checksumming costs a keccak, and callers send the same few addresses over and over.
    # Lowercase (or uppercase) hex is accepted and normalized; mixed case must be a valid
    # EIP-55 checksum, as wallets and ethers.js insist.
    if not is_address(value):
        raise ValueError("mixed-case address with an invalid EIP-55 checksum")
    return to_checksum_address(value)


def _wallet_list(value: list[str] | str) -> list[str]:
    # DESIGN: steering lists accept a JSON array or a comma-separated string.
    items = [part.strip() for part in value.split(",")] if isinstance(value, str) else value
    if len(items) > 10:
        raise ValueError("at most 10 wallets")
    return [_valid_address(item) for item in items]


Amount = Annotated[
    str,
    Field(pattern=AMOUNT_PATTERN, description="Base-10 integer in atomic units, as a string"),
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
WalletList = Annotated[
    Annotated[list[Annotated[str, Field(pattern=ADDRESS_PATTERN)]], Field(max_length=10)]
    | Annotated[str, Field(pattern=rf"^ *{_WALLET} *(, *{_WALLET} *){{0,9}}$")],
    Field(description="Up to 10 maker funding wallets: a JSON array or a comma-separated string"),
    AfterValidator(_wallet_list),
]
