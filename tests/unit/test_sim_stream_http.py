"""GET /_sim/stream fans out once: readers are capped (one more gets the 429 envelope with
Retry-After), every reader gets the very same bytes, and a reader that stops reading is dropped
(hung up) instead of being buffered without end; a reader that comes back is told to read
everything again. The real app and HTTP edge on a loopback socket; the slow reader is a raw
socket that never reads."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from simulator.api.http.appkeys import CHANGES
from simulator.api.sim.stream import STREAM_PUBLISHER
from simulator.errors import RateLimited
from simulator.runtime.app import create_app
from simulator.services.shared.changes import WATCH_MAX_IDS, ChangeFeed
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]
CAP = 3


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    settings = load_settings(
        overrides={"seed": 3, "stream": {"max_subscribers": CAP, "max_queued_kib": 64}}
    )
    app = create_app(settings, start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def _event(resp: ClientResponse) -> bytes:
    return await resp.content.readuntil(b"\n\n")


async def test_one_reader_over_the_cap_gets_the_429_envelope(client: Client) -> None:
    readers = [await client.get("/_sim/stream") for _ in range(CAP)]
    for reader in readers:
        assert reader.status == 200
        assert b"event: hello" in await _event(reader)
    over = await client.get("/_sim/stream")
    assert over.status == 429
    assert over.headers["Retry-After"] == "5"
    error = (await over.json())["error"]
    assert error["code"] == "rate_limited"
    assert error["details"] == {"reason": "stream_readers", "cap": CAP, "retryAfterS": 5}
    assert error["request_id"]
    for reader in readers:
        reader.close()


async def test_every_reader_gets_the_same_bytes(client: Client) -> None:
    readers = [await client.get("/_sim/stream?topics=requests,state") for _ in range(CAP)]
    for reader in readers:
        assert b"event: hello" in await _event(reader)
    assert (await client.get("/v2/health")).status == 200  # journaled: a `requests` event
    received = [await _event(reader) for reader in readers]
    assert received[0].startswith(b"event: requests\n")
    assert b"/v2/health" in received[0]
    assert received[1:] == received[:1] * (CAP - 1)
    for reader in readers:
        reader.close()


def test_a_publication_is_one_bytes_object_for_every_reader_of_the_same_topics() -> None:
    feed = ChangeFeed(max_subscribers=10)
    many = [feed.subscribe(frozenset({"rfqs", "clock"})) for _ in range(5)]
    other = feed.subscribe(frozenset({"clock"}))
    feed.publish({"rfqs": b"event: rfqs\ndata: {}\n\n", "clock": b"event: clock\ndata: {}\n\n"})
    chunks = [s.take() for s in many]
    assert all(c[0] is chunks[0][0] for c in chunks)  # rendered and joined once
    assert chunks[0] == [b"event: rfqs\ndata: {}\n\nevent: clock\ndata: {}\n\n"]
    assert other.take() == [b"event: clock\ndata: {}\n\n"]


def test_marks_cost_nothing_with_nobody_subscribed_and_are_kept_once_for_all() -> None:
    feed = ChangeFeed()
    feed.mark("rfqs", "rfq_1")
    assert feed.take() == {}
    readers = [feed.subscribe(frozenset({"rfqs"})) for _ in range(3)]
    feed.mark("rfqs", "rfq_1")
    feed.mark("rfqs", "rfq_1")
    feed.mark("rfqs", "rfq_2")
    assert feed.take() == {"rfqs": {"rfq_1", "rfq_2"}}
    assert all(r.pending == [] for r in readers)


async def test_a_reader_that_stops_reading_is_dropped_and_a_returning_one_reads_again(
    client: Client,
) -> None:
    app = client.app
    fat = b"event: requests\ndata: " + b"x" * (256 * 1024) + b"\n\n"

    async def render(ids: set[str]) -> bytes:
        return fat

    # The real publisher, with a `requests` renderer that writes 256 KiB a round.
    publisher = app[STREAM_PUBLISHER]
    publisher.renderers = {**publisher.renderers, "requests": render}
    publisher.coalesce_s = 0.0
    slow = socket.socket()
    slow.settimeout(10)  # a hang is a failure (TimeoutError), never a wait for the drop
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect(("127.0.0.1", client.port))
    slow.sendall(b"GET /_sim/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    head = b""
    while b"event: hello" not in head:
        head += await asyncio.to_thread(slow.recv, 4096)  # the server shares this loop
    # From here the socket never reads. A well-behaved reader alongside keeps reading.
    steady = await client.get("/_sim/stream?topics=requests")
    assert b"event: hello" in await _event(steady)
    feed = app[CHANGES]
    rounds = 0
    while feed.dropped == 0:
        assert rounds < 200, "50 MB published and the reader that does not read is still on"
        waiting = asyncio.ensure_future(publisher.published.wait())
        feed.mark("requests", str(rounds))
        await waiting
        rounds += 1
        assert await steady.content.readexactly(len(fat)) == fat  # the reader gets every round
    assert feed.subscribers == 1  # only the steady reader is left
    # The server hung up on it: past what its buffers held, the socket reads an end.
    ended = False
    while not ended:
        try:
            ended = not await asyncio.to_thread(slow.recv, 1 << 20)
        except ConnectionResetError:
            ended = True
    slow.close()
    # The browser's reconnect (Last-Event-ID: the hello's id) is told to read everything.
    back = await client.get("/_sim/stream", headers={"Last-Event-ID": "1"})
    assert b"event: hello" in await _event(back)
    assert await _event(back) == b"event: state\ndata: {}\n\n"
    back.close()
    steady.close()


def test_at_the_cap_a_reader_whose_connection_closed_gives_its_place() -> None:
    feed = ChangeFeed(max_subscribers=2)
    first, second = (feed.subscribe(frozenset({"rfqs"})) for _ in range(2))
    first.alive = second.alive = lambda: True
    with pytest.raises(RateLimited):
        feed.subscribe(frozenset({"rfqs"}))
    second.alive = lambda: False  # its tab was closed while nothing changed
    third = feed.subscribe(frozenset({"rfqs"}))
    assert second.closed  # its stream ends now
    assert second.wake.is_set()
    assert feed.subscribers == 2
    feed.publish({"rfqs": b"event: rfqs\n\n"})
    assert first.take() == third.take() == [b"event: rfqs\n\n"]
    assert second.take() == []


def test_the_first_instance_s_watch_keeps_ids_from_its_first_ask_until_unasked() -> None:
    """Of several instances: what changed here for the first instance's stream, readers here
    or not; a watch nobody takes from stops, and says so at the next ask."""
    feed = ChangeFeed()
    feed.mark("rfqs", "rfq_before")
    assert feed.watched(("rfqs",)) is None  # starts now: what came before is not known
    feed.mark("rfqs", "rfq_1")
    feed.mark("swaps", "swap_1")  # not asked for
    feed.mark("rfqs", "rfq_1")
    assert feed.watched(("rfqs",)) == {"rfqs": {"rfq_1"}}
    assert feed.watched(("rfqs",)) == {"rfqs": set()}
    for n in range(WATCH_MAX_IDS + 1):
        feed.mark("rfqs", f"rfq_{n}")
    assert feed.watched(("rfqs",)) is None  # stopped: started again


async def test_items_relayed_by_another_instance_reach_the_readers(client: Client) -> None:
    feed = client.app[CHANGES]
    item = {"id": "rfq_elsewhere", "created_at": "2026-11-30T15:00:00Z", "status": "quoted"}
    feed.relayed("rfqs", [{**item, "id": "rfq_unread"}])  # nobody reads: dropped
    reader = await client.get("/_sim/stream?topics=rfqs")
    assert b"event: hello" in await _event(reader)
    older = {**item, "id": "rfq_older", "created_at": "2026-11-30T14:00:00Z"}
    feed.relayed("rfqs", [older, item])
    event = await _event(reader)
    assert event.startswith(b"event: rfqs\ndata: ")
    assert json.loads(event.removeprefix(b"event: rfqs\ndata: ")) == {"items": [item, older]}
    reader.close()
