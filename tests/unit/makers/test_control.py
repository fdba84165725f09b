"""The fleet's control channel (makers/control.py, makers/child.py) without a process: the JSON
lines codec, the refusals' kinds on the wire, the child's request handling over a fleet whose
makers are built but not started (nothing connects), and the start request's hand-over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from makers.child import FleetChild, answer, serve_channel
from makers.config import default_fleet
from makers.control import (
    FAILED,
    INVALID_CONFIG,
    INVALID_VALUE,
    NOT_FOUND,
    ControlError,
    decode,
    encode,
    fleet_from_start,
    start_request,
)
from tests.unit.makers.unstarted_fleet import URL, config, unstarted_fleet


@pytest.fixture
async def child() -> AsyncIterator[FleetChild]:
    fleet = unstarted_fleet()
    child = FleetChild()
    child.fleet = fleet
    yield child
    await child.stop({})


def test_a_message_is_one_line_and_comes_back_whole() -> None:
    message = {"id": 3, "op": "reconfigure", "args": {"name": "a\nb", "changes": {"x": 1.5}}}
    line = encode(message)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert decode(line) == message


@pytest.mark.parametrize("line", [b"[1, 2]\n", b'"text"\n', b"{not json\n"])
def test_anything_but_a_json_object_is_refused(line: bytes) -> None:
    with pytest.raises(ValueError, match=r"JSON|Expecting|control message"):
        decode(line)


def test_a_refusal_crosses_the_wire_with_its_kind_and_issues() -> None:
    issues = [{"field": "spread_bps", "loc": ["spread_bps"], "message": "m", "type": "t"}]
    back = ControlError.from_json(
        decode(encode(ControlError(INVALID_CONFIG, "no", issues).to_json()))
    )
    assert (back.kind, back.message, back.issues) == (INVALID_CONFIG, "no", issues)


@pytest.mark.parametrize("data", [{"kind": "weird", "message": "x"}, "not an object"])
def test_an_unknown_or_malformed_refusal_is_a_failure(data: Any) -> None:
    assert ControlError.from_json(data).kind == FAILED


async def test_members_are_the_makers_status_without_the_private_key(child: FleetChild) -> None:
    reply = await answer(child.handlers(), {"id": 1, "op": "members"})
    members = reply["result"]
    assert [m["name"] for m in members] == ["m0", "m1"]
    assert members[0]["behaviour"] == "normal"
    assert members[0]["connected"] is False
    assert "private_key" not in members[0]["config"]
    assert decode(encode(reply)) == reply  # JSON all the way down


async def test_a_change_reaches_the_maker(child: FleetChild) -> None:
    reply = await answer(
        child.handlers(),
        {"id": 2, "op": "reconfigure", "args": {"name": "m1", "changes": {"behaviour": "late"}}},
    )
    assert reply == {"id": 2, "result": None}
    assert child.fleet is not None
    assert child.fleet.makers["m1"].config.behaviour == "late"


@pytest.mark.parametrize(
    ("name", "changes", "kind"),
    [
        ("m9", {}, NOT_FOUND),
        ("m0", {"spread_bps": -1}, INVALID_CONFIG),
        ("m0", {"name": "renamed"}, INVALID_VALUE),
    ],
)
async def test_refusals_carry_their_kind(
    child: FleetChild, name: str, changes: dict[str, Any], kind: str
) -> None:
    reply = await answer(
        child.handlers(),
        {"id": 4, "op": "reconfigure", "args": {"name": name, "changes": changes}},
    )
    assert reply["id"] == 4
    assert reply["error"]["kind"] == kind
    if kind == INVALID_CONFIG:
        assert [issue["field"] for issue in reply["error"]["issues"]] == ["spread_bps"]
    assert child.fleet is not None
    assert child.fleet.makers["m0"].config.spread_bps == config("m0", 0).spread_bps


@pytest.mark.parametrize(
    "message",
    [
        {"id": 5, "op": "explode"},
        {"id": 5, "op": "reconfigure", "args": ["m0"]},
        {"id": 5, "op": "reconfigure", "args": {"name": "m0", "changes": "fast"}},
        {"id": 5, "op": "chain_restarted", "args": {}},  # a KeyError inside the handler
    ],
)
async def test_a_bad_request_is_a_failure_reply_not_an_end(
    child: FleetChild, message: dict[str, Any]
) -> None:
    reply = await answer(child.handlers(), message)
    assert reply["id"] == 5
    assert reply["error"]["kind"] == FAILED


async def test_without_a_fleet_there_are_no_members_and_no_maker() -> None:
    handlers = FleetChild().handlers()
    assert (await answer(handlers, {"id": 1, "op": "members"}))["result"] == []
    reply = await answer(
        handlers, {"id": 2, "op": "reconfigure", "args": {"name": "alpha", "changes": {}}}
    )
    assert reply["error"]["kind"] == NOT_FOUND


async def test_the_channel_answers_each_line_and_closes_the_fleet_at_end_of_input(
    child: FleetChild,
) -> None:
    reader = asyncio.StreamReader()
    written: list[bytes] = []
    reader.feed_data(encode({"id": 1, "op": "members"}))
    reader.feed_data(b"garbage\n")
    reader.feed_data(encode({"id": 2, "op": "stop"}))
    reader.feed_eof()
    await serve_channel(child, reader, written.append)
    replies = {decode(line)["id"]: decode(line) for line in written}
    assert set(replies) == {1, None, 2}
    assert replies[None]["error"]["kind"] == FAILED
    assert child.fleet is None  # stopped (and closed once more at the end of input)


async def test_the_start_request_carries_what_the_fleet_needs() -> None:
    fleet_config = default_fleet()
    request = start_request(
        fleet_config,
        url=URL,
        credentials={m.name: [f"tx_test_{m.name}.s"] for m in fleet_config.makers},
        rpc_urls={97: "http://127.0.0.1:8546"},
        rng_seed=1234,
        v1_keys={"alpha": {"test": "tx_test_v1.s"}},
    )
    fleet = fleet_from_start(decode(encode(request)))
    try:
        assert fleet.config == fleet_config
        assert fleet.url == URL
    finally:
        await fleet.close()


def test_a_start_request_missing_a_field_is_a_failure() -> None:
    with pytest.raises(ControlError) as raised:
        fleet_from_start({"url": URL})
    assert raised.value.kind == FAILED
