"""`rfqsim webhooks listen`: receive a running simulator's webhooks on this machine, like
`stripe listen`.

    rfqsim webhooks listen --api-key KEY [--url http://127.0.0.1:8080]
                           [--forward-to http://127.0.0.1:3000/webhooks] [--port 0]
                           [--events rfq.filled,rfq.failed,rfq.expired] [--print-secret]

It asks the simulator for a server certificate from its local CA (which the simulator's sender
trusts), serves https on 127.0.0.1, registers that URL with POST /v1/webhooks using the key, and
deletes the endpoint again on exit. Every delivery's signature is checked over the raw body (in
constant time, `t` within the tolerance of this machine's clock: the simulator signs with wall-clock
time even after /_sim/clock/advance); good events are printed and,
with --forward-to, POSTed on unchanged (raw body, Content-Type and the Service-* headers). The
forward target's answer is passed back to the simulator, so its failures are retried like a real
receiver's; without --forward-to every good delivery is acknowledged with 200."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from datetime import UTC, datetime
from typing import Any, TextIO

import aiohttp

from rfqkit.webhook_receiver import (
    AsyncReceiver,
    ReceivedRequest,
)
from rfqkit.webhook_signatures import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    signature_problem,
)

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_EVENTS = "rfq.filled,rfq.failed,rfq.expired"
FORWARD_TIMEOUT_S = 10.0  # below the simulator's 15 s acknowledgement timeout
API_TIMEOUT_S = 30.0
FORWARDED_HEADERS = ("Content-Type", EVENT_ID_HEADER, SIGNATURE_HEADER)


def add_parser(commands: Any) -> None:
    webhooks = commands.add_parser("webhooks", help="receive a running simulator's webhooks")
    actions = webhooks.add_subparsers(dest="action", required=True)
    listen = actions.add_parser(
        "listen", help="serve https locally, register it, verify and print (and forward) events"
    )
    listen.add_argument("--url", default=DEFAULT_URL, help=f"simulator API (default {DEFAULT_URL})")
    listen.add_argument("--api-key", required=True, help="a key with scope webhooks:manage")
    listen.add_argument("--forward-to", help="POST every verified event on to this URL")
    listen.add_argument("--port", type=int, default=0, help="local https port (default: free)")
    listen.add_argument(
        "--events", default=DEFAULT_EVENTS, help=f"comma-separated (default {DEFAULT_EVENTS})"
    )
    listen.add_argument(
        "--print-secret", action="store_true", help="print the endpoint's signing secret"
    )
    listen.add_argument(
        "--tolerance", type=int, default=300, help="seconds a signature's t may be off (300)"
    )


class ApiError(Exception):
    pass


class Listener:
    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        self.sim_url = str(args.url).rstrip("/")
        self.api_key = str(args.api_key)
        self.forward_to: str | None = args.forward_to
        self.events = [e.strip() for e in str(args.events).split(",") if e.strip()]
        self.tolerance = int(args.tolerance)
        self.port = int(args.port)
        self.print_secret = bool(args.print_secret)
        self.out = out
        self.secret = ""  # the endpoint's signing secret, once registered
        self.endpoint_id: str | None = None  # our endpoint while it exists
        self._session: aiohttp.ClientSession | None = None

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                trust_env=False, timeout=aiohttp.ClientTimeout(total=API_TIMEOUT_S)
            )
        return self._session

    async def call(self, method: str, path: str, body: Any = None, *, key: bool = False) -> Any:
        headers = {"Authorization": f"Bearer {self.api_key}"} if key else {}
        async with self.session.request(
            method, self.sim_url + path, json=body, headers=headers
        ) as response:
            payload = await response.json(content_type=None)
            if response.status >= 300:
                error = (payload or {}).get("error", {}) if isinstance(payload, dict) else {}
                raise ApiError(
                    f"{method} {path}: {response.status} {error.get('code')}: "
                    f"{error.get('message')} {error.get('details') or ''}".rstrip()
                )
            return payload["data"]

    def _problem(self, received: ReceivedRequest) -> str | None:
        return signature_problem(
            self.secret,
            received.header(SIGNATURE_HEADER),
            received.raw_body,
            self.tolerance,
            now=time.time(),  # t is wall-clock time at sending, not the simulator's clock
        )

    async def respond(self, received: ReceivedRequest) -> int:
        problem = self._problem(received)
        event_id = received.header(EVENT_ID_HEADER) or "?"
        if problem is not None:
            self.say(f"! rejected {event_id}: signature {problem}")
            return 400
        try:
            event = json.loads(received.raw_body)
        except ValueError:
            self.say(f"! rejected {event_id}: body is not JSON")
            return 400
        self.say(describe(event))
        if self.forward_to is None:
            return 200
        return await self.forward(received)

    async def forward(self, received: ReceivedRequest) -> int:
        assert self.forward_to is not None
        headers = {n: v for n in FORWARDED_HEADERS if (v := received.header(n)) is not None}
        try:
            async with self.session.post(
                self.forward_to,
                data=received.raw_body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=FORWARD_TIMEOUT_S),
            ) as response:
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            self.say(f"  -> {self.forward_to} failed: {type(exc).__name__}: {exc}")
            return 502
        self.say(f"  -> {self.forward_to} [{status}]")
        return 200 if 200 <= status < 300 else status

    async def run(self, stop: asyncio.Event) -> int:
        certificate = await self.call(
            "POST", "/_sim/webhooks/certificates", {"hostnames": ["127.0.0.1", "localhost"]}
        )
        receiver = AsyncReceiver(
            cert_pem=certificate["cert_pem"],
            key_pem=certificate["key_pem"],
            port=self.port,
            respond=self.respond,
        )
        await receiver.start()
        try:
            endpoint = await self.call(
                "POST", "/v1/webhooks", {"url": receiver.url, "eventTypes": self.events}, key=True
            )
            self.endpoint_id = str(endpoint["id"])
            self.secret = str(endpoint["signingSecret"])
            self.say(
                f"> Ready: endpoint {self.endpoint_id} at {receiver.url} "
                f"for {','.join(endpoint['eventTypes'])}"
            )
            if self.print_secret:
                self.say(f"> Signing secret: {self.secret}")
            self.say(
                f"> Forwarding to {self.forward_to}" if self.forward_to else "> Not forwarding"
            )
            await stop.wait()
            return 0
        finally:
            await self.unregister()
            await receiver.stop()

    async def unregister(self) -> None:
        if self.endpoint_id is None:
            return
        endpoint_id, self.endpoint_id = self.endpoint_id, None
        try:
            await self.call("DELETE", f"/v1/webhooks/{endpoint_id}", key=True)
            self.say(f"> Deleted endpoint {endpoint_id}")
        except (ApiError, aiohttp.ClientError, TimeoutError) as exc:
            self.say(f"! could not delete endpoint {endpoint_id}: {exc}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def describe(event: Any) -> str:
    """One line per event: time, type, object id, and for RFQ fills late / supersedes."""
    if not isinstance(event, dict):
        return f"{_now()}  (not an event object)"
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    assert isinstance(data, dict)
    name, subject = next(
        ((k, v) for k, v in data.items() if isinstance(v, dict) and "id" in v), ("object", {})
    )
    parts = [_now(), str(event.get("type")), f"{name}={subject.get('id')}"]
    if "late" in subject:
        parts.append(f"late={json.dumps(subject.get('late'))}")
        parts.append(f"supersedes={subject.get('supersedes') or '-'}")
    parts.append(f"[{event.get('id')}]")
    return "  ".join(parts)


def _now() -> str:
    return datetime.now(UTC).strftime("%H:%M:%S")


async def listen(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    listener = Listener(args, sys.stdout)
    try:
        return await listener.run(stop)
    except (ApiError, aiohttp.ClientError, TimeoutError, OSError) as exc:
        print(f"rfqsim webhooks listen: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        await listener.close()


def run(args: argparse.Namespace) -> int:
    if args.action == "listen":
        return asyncio.run(listen(args))
    return 2
