"""A maker connected to one instance of a venue answers auctions on every instance
(docs/decisions.md SC14): for each maker socket it holds, the instance opens a link to each
other instance alive, a maker-stream connection there with the maker's own credential (and the
venue's hop secret, so the other instance does not link it further), and relays:

- from the other instance to the maker: its `rfq` frames (remembering which instance asked
  each quoteId), `filled`, `expired`, `released` and `error` frames, as they come; its
  `welcome` is not passed on (the maker has this instance's), its pings are answered here, and
  an error about levels is dropped (this instance answers the same levels itself);
- from the maker to the other instance: every `levels` frame (this instance reads it too; the
  newest of each pair is replayed when a link opens, so an instance that joins later prices
  the maker at once), and each `quote` or `decline` whose quoteId that instance asked, to it
  alone.

The other instance sees an ordinary maker session: its auction, holds and journal are
unchanged. A link that closes is opened again at the next look at the roster (every second)
while the maker stays connected; nothing of it outlives the maker's socket."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping

import aiohttp

from rfqkit import json_text
from rfqkit.tasks import cancel_and_wait
from simulator.services.sim.instances import InstanceEntry

log = logging.getLogger("rfqsim.makers")

LOOK_EVERY_S = 1.0  # how often the roster is read for instances to link
QUOTES_KEPT = 10_000  # quoteIds remembered per maker (an auction's answers come within seconds)


class MakerLinks:
    def __init__(
        self,
        down: Callable[[str], Awaitable[None]],
        headers: Mapping[str, str],
        others: Callable[[], Awaitable[list[InstanceEntry]]],
    ) -> None:
        self._down = down  # a frame to the maker
        self._headers = dict(headers)  # the maker's credential, the hop secret, its address
        self._others = others  # the other instances alive
        self._links: dict[int, aiohttp.ClientWebSocketResponse] = {}  # by instance id
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._asked: OrderedDict[str, int] = OrderedDict()  # quoteId -> instance that asked
        self._levels: dict[tuple[object, object, object], str] = {}  # newest frame per pair
        self._session: aiohttp.ClientSession | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self._looked = asyncio.Event()  # the roster was read once
        self._first: set[int] = set()  # the instances alive then
        self._welcomed: set[int] = set()  # links the other instance has welcomed
        self._changed = asyncio.Event()  # a link was welcomed or ended

    def linked_to(self) -> set[int]:
        """The instances a link is open to now."""
        return set(self._links)

    async def ready(self, timeout_s: float) -> None:
        """Until the instances alive when the maker connected have each welcomed its link (or
        the link failed), at most `timeout_s`: the maker is welcomed after it, so from then
        on an auction at any of them asks it."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._looked.wait()
                while not all(i in self._welcomed or self._tasks[i].done() for i in self._first):
                    self._changed.clear()
                    await self._changed.wait()

    async def run(self) -> None:
        """Link every other instance alive, and again one whose link closed, until cancelled."""
        self._session = aiohttp.ClientSession()
        try:
            while True:
                with contextlib.suppress(Exception):  # the engine away: looked at again
                    for entry in await self._others():
                        task = self._tasks.get(entry.id)
                        if task is None or task.done():
                            self._tasks[entry.id] = asyncio.create_task(
                                self._link(entry), name=f"maker-link-{entry.id}"
                            )
                if not self._looked.is_set():
                    self._first = set(self._tasks)
                    self._looked.set()
                await asyncio.sleep(LOOK_EVERY_S)
        finally:
            await cancel_and_wait(list(self._tasks.values()))
            await self._session.close()

    def route(self, text: str) -> bool:
        """One frame from the maker: True when it was for another instance alone (a quote or
        decline that instance asked), else False (this instance handles it; levels go to
        every link as well)."""
        if not self._links:
            return False
        try:
            frame = json_text.loads(text)
        except ValueError:
            return False
        if not isinstance(frame, dict):
            return False
        kind = frame.get("type")
        if kind == "levels":
            self._levels[(frame.get("chainId"), frame.get("sellToken"), frame.get("buyToken"))] = (
                text
            )
            for link in list(self._links.values()):
                self._send(link, text)
            return False
        if kind in ("quote", "decline"):
            asker = self._asked.pop(str(frame.get("quoteId")), None)
            answered = self._links.get(asker) if asker is not None else None
            if answered is not None:
                self._send(answered, text)
                return True
        return False

    def _send(self, link: aiohttp.ClientWebSocketResponse, text: str) -> None:
        """Sent without waiting (tasks run in the order made: frames keep theirs)."""
        task = asyncio.get_running_loop().create_task(self._send_now(link, text))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    @staticmethod
    async def _send_now(link: aiohttp.ClientWebSocketResponse, text: str) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await link.send_str(text)

    async def _link(self, entry: InstanceEntry) -> None:
        assert self._session is not None
        url = entry.api_url.replace("http", "ws", 1) + "/v2/maker/stream"
        try:
            async with self._session.ws_connect(url, headers=self._headers, autoping=True) as ws:
                self._links[entry.id] = ws
                for text in list(self._levels.values()):
                    await ws.send_str(text)
                async for message in ws:
                    if message.type == aiohttp.WSMsgType.TEXT:
                        await self._from_instance(entry.id, ws, message.data)
        except (aiohttp.ClientError, OSError) as exc:
            log.debug("maker link to instance %d: %s", entry.id, exc)
        finally:
            self._links.pop(entry.id, None)
            self._welcomed.discard(entry.id)
            self._changed.set()

    async def _from_instance(
        self, instance: int, ws: aiohttp.ClientWebSocketResponse, text: str
    ) -> None:
        try:
            frame = json_text.loads(text)
        except ValueError:
            return
        if not isinstance(frame, dict):
            return
        kind = frame.get("type")
        if kind == "ping":
            await ws.send_str(json_text.dumps({"type": "pong", "id": frame.get("id")}).decode())
            return
        if kind == "welcome":
            self._welcomed.add(instance)  # online there from now on
            self._changed.set()
            return
        if kind == "pong" or (kind == "error" and frame.get("ref") == "levels"):
            return
        if kind == "rfq":
            self._asked[str(frame.get("quoteId"))] = instance
            while len(self._asked) > QUOTES_KEPT:
                self._asked.popitem(last=False)
        with contextlib.suppress(ConnectionError):
            await self._down(text)
