"""Smart-account signatures: ERC-6492 wrapping, the deployless universal validator, and the
counterfactual address of a `SmartWallet` (pure Python, no web3).

Checking a signature for any kind of signer takes one `eth_call` with no `to` and data
`universal_validator_calldata(signer, digest, signature)`; the call returns one byte that
`decode_validator_result` turns into a bool. Nothing is deployed, even for a counterfactual
wallet whose deployment the validator simulates.
"""

from __future__ import annotations

from eth_abi.abi import encode as abi_encode
from eth_utils.abi import function_signature_to_4byte_selector
from eth_utils.address import is_address, to_checksum_address
from eth_utils.crypto import keccak

from contracts.artifacts import load_artifact

ERC6492_MAGIC_SUFFIX = bytes.fromhex("6492" * 16)
ERC1271_MAGIC_VALUE = bytes.fromhex("1626ba7e")
_CREATE_ACCOUNT_SELECTOR = function_signature_to_4byte_selector("createAccount(address,uint256)")


def _address(value: str, what: str) -> str:
    if not is_address(value):
        raise ValueError(f"{what} must be a 20-byte hex address, got {value!r}")
    return to_checksum_address(value)


def wrap_erc6492(factory: str, factory_calldata: bytes, inner_sig: bytes) -> bytes:
    """ERC-6492 signature of a not-yet-deployed account: abi.encode(factory, factoryCalldata,
    innerSig) followed by the 32-byte magic suffix."""
    return (
        abi_encode(
            ["address", "bytes", "bytes"],
            [_address(factory, "factory"), factory_calldata, inner_sig],
        )
        + ERC6492_MAGIC_SUFFIX
    )


def is_erc6492_wrapped(signature: bytes) -> bool:
    return len(signature) >= 32 and signature[-32:] == ERC6492_MAGIC_SUFFIX


def universal_validator_calldata(signer: str, digest: bytes, signature: bytes) -> bytes:
    """Data of the deployless `eth_call` (no `to`) that checks `signature` by `signer` over
    `digest`: UniversalSigValidator creation code ++ abi.encode(signer, digest, signature)."""
    if len(digest) != 32:
        raise ValueError(f"digest must be 32 bytes, got {len(digest)}")
    args = abi_encode(
        ["address", "bytes32", "bytes"], [_address(signer, "signer"), digest, signature]
    )
    return load_artifact("UniversalSigValidator").bytecode + args


def decode_validator_result(result: bytes) -> bool:
    """The validator's answer: b"\\x01" valid, b"\\x00" invalid. Anything else means the call did
    not run the validator as intended (wrong data, a node without deployless eth_call support):
    ValueError, never a silent False."""
    if result == b"\x01":
        return True
    if result == b"\x00":
        return False
    raise ValueError(f"unexpected UniversalSigValidator result 0x{result.hex()}")


def create_account_calldata(owner: str, salt: int) -> bytes:
    """Calldata of SmartWalletFactory.createAccount(owner, salt), the usual 6492 factory call."""
    return _CREATE_ACCOUNT_SELECTOR + abi_encode(
        ["address", "uint256"], [_address(owner, "owner"), salt]
    )


def smart_wallet_address(factory: str, owner: str, salt: int) -> str:
    """Counterfactual CREATE2 address of SmartWalletFactory(factory).createAccount(owner, salt);
    equals the factory's getAddress(owner, salt)."""
    init_code = load_artifact("SmartWallet").bytecode + abi_encode(
        ["address"], [_address(owner, "owner")]
    )
    digest = keccak(
        b"\xff"
        + bytes.fromhex(_address(factory, "factory")[2:])
        + salt.to_bytes(32, "big")
        + keccak(init_code)
    )
    return to_checksum_address(digest[12:])
