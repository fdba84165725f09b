"""One venue over several instances (`--redis-url`): a request is served by the instance its
operation's placement names (api/http/routes.py `Placement`): the firm path and what every
instance holds alike where it lands, an RFQ where its record is (services/shared/owners.py),
the rest at the venue's first instance, and the venue-wide controls there and then at every
other instance. A request for another instance is sent on to it over loopback, whole, and its
answer comes back as it was given; nothing of ours acts on it here (the serving instance
journals it, checks its Host and Origin, its key and its limits).

A request sent on carries the venue's hop secret (kept in the engine) and the client's
address, so the serving instance limits and journals the client, not the instance; a request
with a wrong secret is served where it landed, never sent on again. One process: nothing."""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler
from multidict import CIMultiDict
from yarl import URL

from simulator.api.http.appkeys import REQUEST_ID
from simulator.api.http.middleware import request_id_of
from simulator.api.http.policy import operation_of
from simulator.api.http.routes import Operation
from simulator.errors import VenueUnavailable
from simulator.services.shared.owners import RecordOwners
from simulator.services.sim.instances import InstanceEntry, InstanceRoster, serving_instance

log = logging.getLogger("rfqsim.api")

HOP_SECRET = "X-Rfqsim-Hop"  # the venue's hop secret: sent on by an instance of the venue
HOP_CLIENT = "X-Rfqsim-Client"  # the address the request came from
SERVED_BY = "X-Rfqsim-Instance"  # on every answer of a venue of several: who served it
HOP_REPEAT = "X-Rfqsim-Repeat"  # a venue-wide control, repeated: served, not repeated again
SENT_TO = "rfqsim.sent_to"  # on a request sent on: the instance that served it
# Hop-by-hop (RFC 9110 7.6.1) or recomputed: not copied either way.
_NOT_COPIED = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        HOP_SECRET.lower(),
        HOP_CLIENT.lower(),
        HOP_REPEAT.lower(),
    }
)
ROSTER_FRESH_S = 1.0  # the instances alive are read again after this
TELL_TIMEOUT = aiohttp.ClientTimeout(total=5.0)  # an instance asked to read a change answers


class Forwarding:
    def __init__(
        self,
        here: int,
        roster: InstanceRoster,
        owners: RecordOwners,
        secret: str,
        take_over: Callable[[str, int], Awaitable[bool]],
    ) -> None:
        self.here = here
        self._roster = roster
        self._owners = owners
        self._secret = secret
        # A record whose instance is gone, taken over here (True) from its last copy
        self._take_over = take_over
        self._alive: dict[int, InstanceEntry] = {}
        self._read_at = -ROSTER_FRESH_S
        self._session: aiohttp.ClientSession | None = None

    async def others(self, *, fresh: bool = False) -> list[InstanceEntry]:
        """The venue's other instances alive (`fresh`: read now, not as last read)."""
        return [e for i, e in (await self._instances(fresh=fresh)).items() if i != self.here]

    async def first(self) -> InstanceEntry | None:
        """The venue's first instance alive (what only it holds is served there)."""
        alive = await self._instances()
        return alive[min(alive)] if alive else None

    def first_known(self) -> int | None:
        """The venue's first instance alive as last read, None when that read is not fresh
        (nothing is asked: for what must not wait)."""
        if not self._alive or time.monotonic() - self._read_at > ROSTER_FRESH_S:
            return None
        return min(self._alive)

    def venue_headers(self) -> dict[str, str]:
        """What a call of one instance to another carries: the venue's hop secret."""
        return {HOP_SECRET: self._secret}

    def hop_headers(self, request: web.Request, *names: str) -> dict[str, str]:
        """The request's headers `names` (those present), with the hop secret and the
        client's address: what a connection opened for the client at another instance sends."""
        headers = {name: request.headers[name] for name in names if name in request.headers}
        return {**headers, HOP_SECRET: self._secret, HOP_CLIENT: request.remote or ""}

    def sent_on(self, request: web.Request) -> bool:
        """Sent here by an instance of the venue (a wrong secret is not)."""
        sent = request.headers.get(HOP_SECRET)
        return sent is not None and hmac.compare_digest(sent, self._secret)

    async def _instances(self, *, fresh: bool = False) -> dict[int, InstanceEntry]:
        if fresh or time.monotonic() - self._read_at > ROSTER_FRESH_S:
            self._alive = {entry.id: entry for entry in await self._roster.instances()}
            self._read_at = time.monotonic()
        return self._alive

    async def serving(
        self, operation: Operation, request: web.Request, *, fresh: bool = False
    ) -> InstanceEntry | None:
        """The instance that serves the request, None for this one (`fresh`: the instances
        alive read now, not as last read)."""
        alive = await self._instances(fresh=fresh)
        owner = None
        if operation.placement == "owner":
            assert operation.record_param is not None, operation.operation_id
            record_id = request.match_info[operation.record_param]
            owner = await self._owners.owner(record_id)
            if owner is not None and owner != self.here and owner not in alive:
                alive = await self._instances(fresh=True)  # one that just joined
                if owner not in alive and await self._take_over(record_id, owner):
                    return None  # its instance is gone: the record is this one's now
        chosen = serving_instance(operation.placement, self.here, sorted(alive), owner)
        return None if chosen == self.here else alive[chosen]

    async def send(
        self, request: web.Request, entry: InstanceEntry, *, repeat: bool = False
    ) -> web.StreamResponse:
        """The request, sent to `entry` whole; its answer as given (503 venue_unavailable
        when that instance does not answer). The headers go as they came, byte for byte (a
        value that is not ASCII is the other instance's to judge); the body streams as it
        arrives (the other instance sees the request, and may claim its Idempotency-Key,
        while a slow client still uploads); a repeat sends the body this instance read."""
        headers = CIMultiDict(
            (name, value)
            for name, value in (
                (raw_name.decode("latin-1"), raw_value.decode("latin-1"))
                for raw_name, raw_value in request.raw_headers
            )
            if name.lower() not in _NOT_COPIED
        )
        body: bytes | AsyncIterator[bytes] | None = None
        if repeat:
            body = await request.read()
        elif request.body_exists:
            body = request.content.iter_any()
        headers[HOP_SECRET] = self._secret
        headers[HOP_CLIENT] = request.remote or ""
        if repeat:
            headers[HOP_REPEAT] = "1"
        url = URL(entry.api_url + str(request.rel_url), encoded=True)
        if not repeat:
            request[SENT_TO] = entry.id
        try:
            async with self._client().request(
                request.method, url, data=body, headers=headers, allow_redirects=False
            ) as answer:
                if answer.content_type == "text/event-stream":
                    return await _streamed(request, answer)
                payload = await answer.read()
                status, answered = answer.status, answer.headers
        except (aiohttp.ClientError, OSError) as exc:
            raise VenueUnavailable(
                "Quotes are briefly not served; retry (an instance of the venue did not answer)"
            ) from exc
        response = web.Response(status=status, body=payload, headers=_copied(answered))
        request[REQUEST_ID] = answered.get("X-Request-Id") or request_id_of(request)
        return response

    async def _repeated(
        self, request: web.Request
    ) -> list[tuple[InstanceEntry, web.StreamResponse | BaseException]]:
        """The same request at every other instance alive, at once: each one's answer or
        failure, in the instances' order."""
        others = await self.others(fresh=True)
        outcomes = await asyncio.gather(
            *(self.send(request, entry, repeat=True) for entry in others), return_exceptions=True
        )
        return list(zip(others, outcomes, strict=True))

    async def repeat_at_others(self, request: web.Request) -> list[web.Response]:
        """The same request at every other instance alive, for its part of the answer (a read
        each instance answers for what it holds); their answers, in the instances' order (one
        that does not answer: VenueUnavailable)."""
        answers = []
        for _, outcome in await self._repeated(request):
            if isinstance(outcome, BaseException):
                raise outcome
            if isinstance(outcome, web.Response):
                answers.append(outcome)
        return answers

    async def repeat_elsewhere(self, request: web.Request) -> None:
        """A venue-wide control answered here: the same request at every other instance
        (one that fails is logged; this instance's answer stands)."""
        for entry, outcome in await self._repeated(request):
            if isinstance(outcome, BaseException) or outcome.status >= 400:
                failed = outcome if isinstance(outcome, BaseException) else outcome.status
                log.warning(
                    "%s %s not applied at instance %d: %s",
                    request.method,
                    request.path,
                    entry.id,
                    failed,
                )

    async def tell_others(self, path: str) -> None:
        """`POST path` (no body) at every other instance alive, with the hop secret, answered
        by all (one that fails is logged: it reads the change from the engine's channel)."""
        for entry, outcome in await self._posted_at_others(path):
            if isinstance(outcome, BaseException) or outcome[0] >= 300:
                failed = outcome if isinstance(outcome, BaseException) else outcome[0]
                log.warning("POST %s not answered by instance %d: %s", path, entry.id, failed)

    async def ask_others(self, path: str) -> list[tuple[InstanceEntry, Any]]:
        """`POST path` (no body) at every other instance alive, with the hop secret: each
        one's JSON answer, in the instances' order (one that does not answer is left out: an
        instance going away, or gone)."""
        answers = []
        for entry, outcome in await self._posted_at_others(path):
            if isinstance(outcome, BaseException) or outcome[0] != 200:
                log.debug("POST %s not answered by instance %d: %s", path, entry.id, outcome)
            else:
                answers.append((entry, outcome[1]))
        return answers

    async def _posted_at_others(
        self, path: str
    ) -> list[tuple[InstanceEntry, tuple[int, Any] | BaseException]]:
        others = await self.others(fresh=True)

        async def post(entry: InstanceEntry) -> tuple[int, Any]:
            async with self._client().post(
                entry.api_url + path, headers=self.venue_headers(), timeout=TELL_TIMEOUT
            ) as answer:
                body = await answer.json() if answer.status == 200 else None
                return answer.status, body

        outcomes = await asyncio.gather(*(post(e) for e in others), return_exceptions=True)
        return list(zip(others, outcomes, strict=True))

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                auto_decompress=False,  # the answer goes back as it was encoded
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=2.0),
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _copied(answered: Mapping[str, str]) -> CIMultiDict[str]:
    """An answer's headers as passed on (hop-by-hop and recomputed ones left out)."""
    return CIMultiDict(
        (name, value) for name, value in answered.items() if name.lower() not in _NOT_COPIED
    )


async def _streamed(request: web.Request, answer: aiohttp.ClientResponse) -> web.StreamResponse:
    """An event stream (the console's), passed on as it comes until either side ends it."""
    response = web.StreamResponse(status=answer.status, headers=_copied(answer.headers))
    await response.prepare(request)
    async for chunk in answer.content.iter_any():
        await response.write(chunk)
    return response


# Where each request of a venue of several instances is served (None: one process)
FORWARDING: web.AppKey[Forwarding | None] = web.AppKey("forwarding")


# What a request that carries a hop secret is to this instance: "venue" (sent by an instance
# of the venue: its client is the one named, it was counted where it arrived) or "foreign".
HOP = "rfqsim.hop"


@web.middleware
async def hop_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Outermost: a request another instance of the venue sent here is served as its client's
    (its address is what the journal shows), and marked, so the access middleware does not
    count it again and the forwarding middleware serves it here."""
    forwarding = request.app.get(FORWARDING)
    if forwarding is None or request.headers.get(HOP_SECRET) is None:
        return await handler(request)
    if not forwarding.sent_on(request):
        request[HOP] = "foreign"
        return await handler(request)
    client = request.headers.get(HOP_CLIENT)
    served = request.clone(remote=client) if client else request  # it reads the body
    served[HOP] = "venue"
    response = await handler(served)
    if served is not request:
        # What the handlers left on the request (its id, its timings) is read from the
        # original when the response is prepared.
        request.update(served)
    return response


def journaled_elsewhere(request: web.Request) -> bool:
    """Another instance of the venue serves the request (and journals it), or it is a
    venue-wide control repeated here (journaled where it was served first)."""
    return request.get(SENT_TO) is not None or repeated(request)


def repeated(request: web.Request) -> bool:
    """A venue-wide control another instance served first and repeats here."""
    return sent_on(request) and request.headers.get(HOP_REPEAT) is not None


def sent_on(request: web.Request) -> bool:
    """Sent here by another instance of the venue: counted by the limiters where it arrived."""
    return request.get(HOP) == "venue"


@web.middleware
async def forwarding_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """After the access middleware (the instance the client reached identified, limited and
    counted it, as one instance of a real deployment does): a request another instance serves
    is sent there (what this one serves says so: `add_served_by`)."""
    forwarding = request.app.get(FORWARDING)
    if forwarding is None:
        return await handler(request)  # one process
    operation = operation_of(request)
    hop = request.get(HOP)
    if hop is not None:  # sent here (or with a secret that is not the venue's): served here
        response = await handler(request)
        if hop == "venue" and request.headers.get(HOP_REPEAT) is None:
            await _repeated(forwarding, operation, request, response)
        return response
    if operation is not None and operation.placement != "here":
        serving = await forwarding.serving(operation, request)
        if serving is not None:
            try:
                return await forwarding.send(request, serving)
            except VenueUnavailable:
                if request.body_exists:
                    raise  # its body went (or began to go) to the instance that failed
            # That instance did not answer: it may be gone from the venue since the instances
            # alive were last read (a record it held is then taken over here).
            serving = await forwarding.serving(operation, request, fresh=True)
            if serving is not None:
                return await forwarding.send(request, serving)
    response = await handler(request)
    await _repeated(forwarding, operation, request, response)
    return response


async def add_served_by(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: which instance served the answer (one sent on keeps the serving
    instance's), streams and WebSocket handshakes included."""
    forwarding = request.app.get(FORWARDING)
    if forwarding is not None:
        response.headers.setdefault(SERVED_BY, str(forwarding.here))


async def _repeated(
    forwarding: Forwarding,
    operation: Operation | None,
    request: web.Request,
    response: web.StreamResponse,
) -> None:
    """A venue-wide control that succeeded here (the first instance) goes to the others."""
    if operation is not None and operation.placement == "every" and response.status < 400:
        await forwarding.repeat_elsewhere(request)
