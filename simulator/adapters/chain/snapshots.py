"""The chains' side of reset and snapshots, over Anvil's own RPC methods: `evm_snapshot` /
`evm_revert` for the baseline (cheap, in-node; a revert uses its mark up, so a fresh one is taken
at once, and it also puts back the block time), `anvil_dumpState` / `anvil_loadState` for named
snapshots and the state directory (the whole state as gzip hex, blocks and receipts included).
Each of these sets the node's block time (a revert to its mark's block), so afterwards the chains
are brought up to the service clock (`follow_clock`): no block mined later may be stamped before
the service clock's second (docs/decisions.md F25).

After any of these the simulator's own JSON-RPC clients forget what they learnt from the node
(the local nonce cache: a reverted deployer or treasury nonce must be read again). They go past
the `/_sim/faults` chain switch (`control_rpc`): a reset or a save on stop works while a chain is
cut off from the service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from rfqkit.chain import AnvilChain, ChainUnavailable


class AnvilChainStates:
    def __init__(self, chains: Mapping[int, AnvilChain], clock_offset: Callable[[], float]) -> None:
        self._chains = chains  # the app's chains by id (filled at start-up)
        self._clock_offset = clock_offset  # the service clock's offset (seconds ahead of wall)

    async def mark(self) -> dict[int, str]:
        ids = await asyncio.gather(*(c.control_rpc("evm_snapshot") for c in self._chains.values()))
        return {chain_id: str(mark) for chain_id, mark in zip(self._chains, ids, strict=True)}

    async def revert(self, marks: dict[int, str]) -> dict[int, str]:
        async def one(chain: AnvilChain) -> str:
            mark = marks.get(chain.chain_id)
            if mark is None:
                raise ChainUnavailable(f"chain {chain.chain_id}: no baseline mark to revert to")
            if await chain.control_rpc("evm_revert", [mark]) is not True:
                raise ChainUnavailable(f"chain {chain.chain_id}: evm_revert({mark}) refused")
            await chain.reset()  # local nonces are stale now
            return str(await chain.control_rpc("evm_snapshot"))

        fresh = await asyncio.gather(*(one(c) for c in self._chains.values()))
        return dict(zip(self._chains, fresh, strict=True))

    async def export(self) -> dict[int, str]:
        dumps = await asyncio.gather(
            *(c.control_rpc("anvil_dumpState") for c in self._chains.values())
        )
        return {chain_id: str(dump) for chain_id, dump in zip(self._chains, dumps, strict=True)}

    async def import_state(self, states: dict[int, str]) -> None:
        async def one(chain: AnvilChain) -> None:
            state = states.get(chain.chain_id)
            if state is None:
                return  # a chain added since: it keeps its fresh deployment
            await chain.control_rpc("anvil_loadState", [state])
            await chain.reset()

        await asyncio.gather(*(one(c) for c in self._chains.values()))

    async def follow_clock(self) -> None:
        async def one(chain: AnvilChain) -> None:
            if await chain.keep_up_with(self._clock_offset()):
                await chain.control_rpc("evm_mine")  # `latest` shows the time at once

        await asyncio.gather(*(one(c) for c in self._chains.values()))
