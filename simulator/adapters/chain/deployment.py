"""Deterministic deployment of the venue's contracts on one chain.

Every contract is created by the fixed deployer key in a fixed order, so a fresh chain gets the
same addresses on every run (CREATE addresses depend only on deployer and nonce). Attaching to a
node where that deployment already happened reuses it after checking the code is there."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import rlp  # type: ignore[import-untyped]
from eth_abi.abi import encode
from eth_utils.abi import function_signature_to_4byte_selector
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from contracts.artifacts import load_artifact
from rfqkit.chain import AnvilChain
from rfqkit.wallets import DEPLOYER, FEE_RECIPIENT, PROVIDER_TREASURY, demo_wallet, maker_wallet
from simulator.services.shared.venue import VenueContracts, VenueCorridor, VenueToken
from simulator.settings import ChainSettings, CorridorTiming, FundingSettings

DEPLOY_GAS = 6_000_000
CALL_GAS = 200_000
MINT_SELECTOR = function_signature_to_4byte_selector("mint(address,uint256)")
APPROVE_SELECTOR = function_signature_to_4byte_selector("approve(address,uint256)")
MAX_UINT256 = 2**256 - 1


class DeploymentError(RuntimeError):
    pass


def create_address(sender: str, nonce: int) -> str:
    return to_checksum_address(keccak(rlp.encode([bytes.fromhex(sender[2:]), nonce]))[12:])


@dataclass(frozen=True)
class PlannedContract:
    label: str  # token symbol, or the contract's role
    artifact: str
    constructor_types: tuple[str, ...]
    constructor_args: tuple[Any, ...]


def deployment_plan(chain: ChainSettings) -> list[PlannedContract]:
    """The ordered list of creations; a contract's position is its deployer nonce."""
    plan = [
        PlannedContract(
            label=token.symbol,
            artifact="TestUSDT" if token.usdt_like else "TestERC20",
            constructor_types=("string", "string", "uint8"),
            constructor_args=(token.name, token.symbol, token.decimals),
        )
        for token in chain.tokens
    ]
    signature_transfer = create_address(DEPLOYER.address, len(plan))
    plan += [
        PlannedContract("signature_transfer", "SignatureTransfer", (), ()),
        PlannedContract(
            "reactor",
            "RfqReactor",
            ("address", "address"),
            (signature_transfer, FEE_RECIPIENT.address),
        ),
        PlannedContract("router", "SampleRouter", (), ()),
        PlannedContract("wallet_factory", "SmartWalletFactory", (), ()),
    ]
    return plan


def funded_wallets(funding: FundingSettings) -> list[str]:
    """Everyone who gets native coin and every test token at start-up."""
    return [
        *(maker_wallet(i).address for i in range(funding.makers)),
        *(demo_wallet(i).address for i in range(funding.demo_wallets)),
        PROVIDER_TREASURY.address,
    ]


@dataclass(frozen=True)
class Deployment:
    contracts: VenueContracts
    tokens: tuple[VenueToken, ...]
    corridors: tuple[VenueCorridor, ...]


async def _ensure_success(chain: AnvilChain, tx_hashes: list[str]) -> None:
    receipts = await chain.receipts(tx_hashes)
    failed = [r["transactionHash"] for r in receipts if int(r["status"], 16) != 1]
    if failed:
        raise DeploymentError(f"chain {chain.chain_id}: deployment transactions reverted: {failed}")


async def deploy_venue(
    chain: AnvilChain,
    settings: ChainSettings,
    funding: FundingSettings,
    corridor_defaults: CorridorTiming,
) -> Deployment:
    plan = deployment_plan(settings)
    addresses = {p.label: create_address(DEPLOYER.address, i) for i, p in enumerate(plan)}
    await chain.set_balance(DEPLOYER.address, funding.native_wei)
    start_nonce = await chain.nonce(DEPLOYER.address)
    if start_nonce == 0:
        hashes = []
        for planned in plan:
            artifact = load_artifact(planned.artifact)
            data = artifact.bytecode + encode(
                list(planned.constructor_types), list(planned.constructor_args)
            )
            hashes.append(
                await chain.send_transaction(
                    DEPLOYER.private_key, to=None, data=data, gas=DEPLOY_GAS
                )
            )
        await _ensure_success(chain, hashes)
        await _fund(chain, settings, funding, addresses)
    else:
        # Attached to a node where someone (an earlier rfqsim) already deployed: check, then reuse.
        for label, address in addresses.items():
            if not await chain.get_code(address):
                raise DeploymentError(
                    f"chain {chain.chain_id}: deployer nonce is {start_nonce} but {label} has no "
                    f"code at {address}; attach to a fresh node or one rfqsim deployed"
                )
    tokens = tuple(
        VenueToken(
            symbol=t.symbol,
            name=t.name,
            address=addresses[t.symbol],
            decimals=t.decimals,
            usdt_like=t.usdt_like,
        )
        for t in settings.tokens
    )
    by_symbol = {t.symbol: t for t in tokens}
    corridors = tuple(
        VenueCorridor(by_symbol[c.base], by_symbol[c.quote], c.timing(corridor_defaults))
        for c in settings.corridors
    )
    contracts = VenueContracts(
        signature_transfer=addresses["signature_transfer"],
        reactor=addresses["reactor"],
        router=addresses["router"],
        wallet_factory=addresses["wallet_factory"],
        fee_recipient=FEE_RECIPIENT.address,
    )
    return Deployment(contracts=contracts, tokens=tokens, corridors=corridors)


async def _fund(
    chain: AnvilChain, settings: ChainSettings, funding: FundingSettings, addresses: dict[str, str]
) -> None:
    wallets = funded_wallets(funding)
    await asyncio.gather(*(chain.set_balance(w, funding.native_wei) for w in wallets))
    hashes = []
    for token in settings.tokens:
        amount = funding.token_whole_units * 10**token.decimals
        for wallet in wallets:
            data = MINT_SELECTOR + encode(["address", "uint256"], [wallet, amount])
            hashes.append(
                await chain.send_transaction(
                    DEPLOYER.private_key, to=addresses[token.symbol], data=data, gas=CALL_GAS
                )
            )
    # The funded maker wallets let the signature-transfer contract move their tokens (the
    # Permit2 set-up every maker does once), so any bot using them can quote at once.
    for index in range(funding.makers):
        maker = maker_wallet(index)
        for token in settings.tokens:
            data = APPROVE_SELECTOR + encode(
                ["address", "uint256"], [addresses["signature_transfer"], MAX_UINT256]
            )
            hashes.append(
                await chain.send_transaction(
                    maker.private_key, to=addresses[token.symbol], data=data, gas=CALL_GAS
                )
            )
    await _ensure_success(chain, hashes)
