"""Outgoing `levels`: cheap checking, direct wire frames, per-direction coalescing to the
server's `levelsMinIntervalMs` with unchanged levels skipped (the client's part), and when a
simulated maker recomputes which directions (`LevelsRounds`).

Levels are the most frequent maker message, so they skip the pydantic models on the way out:
a ladder of plain ints that is plainly valid (at most nine points, both columns strictly
increasing and positive, below 2**256; a positive chain id; 0x addresses) is accepted as it is
and written straight to JSON, byte for byte what `serialize(Levels(...))` writes. Anything else
goes through the `Levels` model, which normalises it or raises its usual ValidationError.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from rfqkit.maker_protocol import MAX_LEVELS, UINT256_MAX, Level, Levels, is_address

Point = tuple[int, int]  # (sellAmount, buyAmount)
LevelsInput = Sequence[tuple[int, int]] | Sequence[Level]
SendText = Callable[[str], Awaitable[bool]]
Spawn = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[None]"]


@dataclass(frozen=True)
class LevelsUpdate:
    """One checked `levels` message: the direction and its points."""

    chain_id: int
    sell_token: str
    buy_token: str
    points: tuple[Point, ...]

    @property
    def key(self) -> tuple[int, str, str]:
        return (self.chain_id, self.sell_token.lower(), self.buy_token.lower())

    def frame(self) -> str:
        """The text frame, exactly as `rfqkit.maker_protocol.serialize` writes the Levels model."""
        return json.dumps(
            {
                "type": "levels",
                "chainId": self.chain_id,
                "sellToken": self.sell_token,
                "buyToken": self.buy_token,
                "levels": [{"sellAmount": str(s), "buyAmount": str(b)} for s, b in self.points],
            },
            separators=(",", ":"),
        )


def _plain_points(levels: LevelsInput) -> tuple[Point, ...] | None:
    """The points when they are plainly valid ints, else None (let the model decide)."""
    if len(levels) > MAX_LEVELS:
        return None
    points: list[Point] = []
    previous_sell = previous_buy = 0
    for point in levels:
        if isinstance(point, Level):
            sell, buy = point.sell_amount, point.buy_amount
        elif type(point) is tuple and len(point) == 2:
            sell, buy = point
        else:
            return None
        if type(sell) is not int or type(buy) is not int:
            return None
        if not (previous_sell < sell <= UINT256_MAX and previous_buy < buy <= UINT256_MAX):
            return None
        points.append((sell, buy))
        previous_sell, previous_buy = sell, buy
    return tuple(points)


def check_levels(
    chain_id: int, sell_token: str, buy_token: str, levels: LevelsInput
) -> LevelsUpdate:
    """The update to publish; ValueError (pydantic's ValidationError) for an invalid ladder."""
    if type(chain_id) is int and chain_id > 0 and is_address(sell_token) and is_address(buy_token):
        points = _plain_points(levels)
        if points is not None:
            return LevelsUpdate(chain_id, sell_token, buy_token, points)
    message = Levels(
        chain_id=chain_id,
        sell_token=sell_token,
        buy_token=buy_token,
        levels=[
            p if isinstance(p, Level) else Level(sell_amount=p[0], buy_amount=p[1]) for p in levels
        ],
    )
    return LevelsUpdate(
        message.chain_id,
        message.sell_token,
        message.buy_token,
        tuple((lv.sell_amount, lv.buy_amount) for lv in message.levels),
    )


@dataclass
class _Slot:
    """Coalescing state of one pair direction on one connection."""

    last_sent: float = float("-inf")  # loop time of the last send
    sent: tuple[Point, ...] | None = None  # the points of that send
    pending: LevelsUpdate | None = None  # newest levels waiting for the interval to pass
    pending_resend_s: float = 0.0
    flusher: asyncio.Task[None] | None = None

    def unchanged(self, update: LevelsUpdate, now: float, resend_after_s: float) -> bool:
        return update.points == self.sent and now - self.last_sent < resend_after_s


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


@dataclass
class LevelsCoalescer:
    """Per connection: at most one `levels` per direction per interval (the newest wins; a change
    inside the interval is sent once when it ends), and levels equal to the last ones sent are
    not sent again until `resend_after_s` after that send."""

    send: SendText
    spawn: Spawn
    slots: dict[tuple[int, str, str], _Slot] = field(default_factory=dict)
    now: Callable[[], float] = field(default=_loop_time)  # the event loop's clock

    async def publish(self, update: LevelsUpdate, interval_s: float, resend_after_s: float) -> bool:
        slot = self.slots.get(update.key)
        if slot is None:
            slot = self.slots[update.key] = _Slot()
        now = self.now()
        if slot.flusher is not None:
            slot.pending, slot.pending_resend_s = update, resend_after_s
            return True
        if slot.unchanged(update, now, resend_after_s):
            return True
        if now - slot.last_sent >= interval_s:
            slot.last_sent, slot.sent = now, update.points
            return await self.send(update.frame())
        slot.pending, slot.pending_resend_s = update, resend_after_s
        delay = max(0.0, interval_s - (now - slot.last_sent))
        slot.flusher = self.spawn(self._flush(slot, delay), "levels")
        return True

    async def _flush(self, slot: _Slot, delay: float) -> None:
        await asyncio.sleep(delay)
        update, slot.pending, slot.flusher = slot.pending, None, None
        now = self.now()
        if update is None or slot.unchanged(update, now, slot.pending_resend_s):
            return
        slot.last_sent, slot.sent = now, update.points
        await self.send(update.frame())

    def cancel(self) -> None:
        """Cancel every scheduled send (the connection is gone)."""
        for slot in self.slots.values():
            if slot.flusher is not None:
                slot.flusher.cancel()


class LevelsRounds:
    """When a simulated maker publishes levels, and which. A full round (every direction) runs
    when asked (`everything`: a welcome, a fill, a reconfiguration) and at least every
    `interval_s`; in between, a round republishes only the directions giving a token whose
    inventory changed (`changed`: a quote made or let go)."""

    def __init__(self) -> None:
        self._wake = asyncio.Event()
        self._full = True
        self._last_full = float("-inf")  # loop time of the last full round
        self._dirty: set[tuple[int, str]] = set()  # (chain, lower-case given token)

    def everything(self) -> None:
        self._full = True
        self._wake.set()

    def changed(self, chain_id: int | None = None, token: str | None = None) -> None:
        if chain_id is not None and token is not None:
            self._dirty.add((chain_id, token.lower()))
        self._wake.set()

    async def next(self, interval_s: float) -> tuple[bool, set[tuple[int, str]]]:
        """Wait for the next round (a wake, or `interval_s` without one): whether it is full,
        and the (chain, token) pairs that changed since the last round."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(interval_s):
                await self._wake.wait()
        self._wake.clear()
        now = asyncio.get_running_loop().time()
        full = self._full or now - self._last_full >= interval_s
        dirty, self._dirty, self._full = self._dirty, set(), False
        if full:
            self._last_full = now
        return full, dirty
