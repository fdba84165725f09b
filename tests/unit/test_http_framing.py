"""Requests the HTTP parser refuses, sent over a raw socket to the server `rfqsim serve` runs
(ApiRunner): every answer is the spec's envelope with X-Request-Id equal to its request_id, and
no credential in the request reaches the body or any log line (aiohttp answered these itself as
text/plain echoing the header line, and logged a traceback quoting it)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from aiohttp import web

from simulator.api.http.server import ApiRunner
from simulator.runtime.app import create_app
from simulator.settings import load_settings

KEY_SECRET = "Zk3qT8yWv0nP4rXc1bLd7eFg2hJm5sQa9uIo6tRw3eY"
KEY = f"tx_test_0123456789ab.{KEY_SECRET}"
CLAIM = "rfqc_Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXcVbNmQwErTy"
SECRETS = (KEY_SECRET, CLAIM[5:])


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


async def send(port: int, raw: bytes, *, then: bytes | None = None) -> Answer:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        if then is not None:
            await asyncio.sleep(0.05)  # a later packet: the body's error is found mid-handler
            writer.write(then)
            await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), 5)
        return Answer(status, headers, body)
    finally:
        writer.close()


@pytest.fixture
async def port() -> AsyncIterator[int]:
    app = create_app(load_settings(), start_chains=False)
    runner = ApiRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


def request(head: bytes, *headers: bytes) -> bytes:
    return head + b"\r\nHost: 127.0.0.1\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"


HEALTH = b"GET /v2/health HTTP/1.1"
CASES = {
    "NUL after a bearer key": (
        request(HEALTH, b"Authorization: Bearer " + KEY.encode() + b"\x00"),
        "bad_header",
    ),
    "CR at the end of X-API-Key": (
        request(HEALTH, b"X-API-Key: " + KEY.encode() + b"\r"),
        "bad_header",
    ),
    "NUL inside X-Rfq-Claim": (
        request(
            b"GET /v2/rfq/rfq_1 HTTP/1.1",
            b"X-Rfq-Claim: " + CLAIM[:20].encode() + b"\x00" + CLAIM[20:].encode(),
        ),
        "bad_header",
    ),
    "request line over 8190 bytes": (
        request(b"GET /v2/health?a=" + b"a" * 9000 + b" HTTP/1.1"),
        "line_too_long",
    ),
    "header over 8190 bytes": (request(HEALTH, b"X-Big: " + b"b" * 9000), "line_too_long"),
    "10k query parameters": (
        request(b"GET /v2/health?" + b"&".join(b"p%d=1" % i for i in range(10_000)) + b" HTTP/1.1"),
        "line_too_long",
    ),
    "10k headers": (
        request(HEALTH, *(b"X-H%d: 1" % i for i in range(10_000))),
        "too_many_headers",
    ),
    "bare LF line ends": (b"GET /v2/health HTTP/1.1\nHost: 127.0.0.1\n\n", "bad_request_line"),
    "bare CR": (b"GET /v2/health HTTP/1.1\rHost: 127.0.0.1\r\n\r\n", "bad_request_line"),
    "obs-fold": (request(HEALTH, b"X-A: a", b"  folded"), "bad_header"),
    "invalid method": (request(b"G@T /v2/health HTTP/1.1"), "bad_method"),
    "TLS hello on the plain port": (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", "bad_method"),
    "bad chunk size in the first packet": (
        request(
            b"POST /v2/rfq/preview HTTP/1.1",
            b"Content-Type: application/json",
            b"Transfer-Encoding: chunked",
        )
        + b"zz\r\n{}\r\n0\r\n\r\n",
        "bad_body_framing",
    ),
}


def assert_envelope(answer: Answer, reason: str) -> None:
    assert answer.status == 400
    assert answer.headers["content-type"] == "application/json"
    body = json.loads(answer.body)
    error = body["error"]
    assert set(error) == {"code", "message", "request_id", "details"}
    assert error["code"] == "invalid_request"
    assert error["details"] == {"reason": reason}
    assert error["request_id"].startswith("req_")
    assert answer.headers["x-request-id"] == error["request_id"]
    for secret in SECRETS:
        assert secret.encode() not in answer.body


@pytest.mark.parametrize("case", list(CASES))
async def test_parser_refusals_answer_in_the_envelope_and_log_no_secret(
    port: int, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    raw, reason = CASES[case]
    with caplog.at_level(logging.DEBUG):
        answer = await send(port, raw)
    assert_envelope(answer, reason)
    logged = caplog.text + "".join(
        logging.Formatter().formatException(r.exc_info) for r in caplog.records if r.exc_info
    )
    for secret in SECRETS:
        assert secret not in logged
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_a_keyless_bad_chunk_in_a_later_packet_is_400_bad_body_framing(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    head = request(
        b"POST /v2/rfq/preview HTTP/1.1",
        b"Content-Type: application/json",
        b"Transfer-Encoding: chunked",
    )
    with caplog.at_level(logging.DEBUG):
        answer = await send(port, head, then=b"zz\r\n{}\r\n0\r\n\r\n")
    assert_envelope(answer, "bad_body_framing")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
