"""One run of the proxy: read the upstream's descriptions, listen, forward and check until
SIGINT or SIGTERM, then close open WebSockets, write the report and say what was found.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import aiohttp
from aiohttp import web

from rfqkit.local_guard import HostCheck, refusal_of
from rfqkit.redaction import Redactor, install_redaction
from rfqsim.proxy import report
from rfqsim.proxy.documents import Documents
from rfqsim.proxy.findings import Findings
from rfqsim.proxy.forward import Forwarder, own_error
from rfqsim.proxy.spec import DOCUMENT_PATHS
from rfqsim.proxy.state import State
from rfqsim.proxy.watcher import Watcher

log = logging.getLogger("rfqsim.proxy")
DOCUMENT_TIMEOUT = aiohttp.ClientTimeout(total=15)
DOCUMENT_RETRY_S = 30.0
SHUTDOWN_S = 5.0  # requests still in flight at a stop get this long to finish


class ListenError(Exception):
    """The proxy could not listen where it was told to."""


@dataclass(frozen=True)
class Options:
    upstream: str
    host: str
    port: int
    report_dir: Path
    fail_on_violation: bool
    header: bool
    redact_headers: tuple[str, ...] = ()  # more header names whose values are secrets
    upstream_timeout_s: float = 30.0  # an upstream silent this long: 502 upstream_error
    allowed_hosts: tuple[str, ...] = ()  # Host names answered besides loopback and addresses


class Proxy:
    """The proxy's parts, wired: the checks, the forwarder, the server."""

    def __init__(self, options: Options, out: TextIO) -> None:
        self.options = options
        self.out = out
        self.redactor = Redactor(options.redact_headers)
        self.findings = Findings(out, self.redactor)
        self.documents = Documents()
        self.state = State()
        self.forwarder = Forwarder(
            options.upstream,
            Watcher(self.findings, self.documents, self.state),
            self.findings,
            header=options.header,
            read_timeout_s=options.upstream_timeout_s,
        )
        self.host_check = HostCheck(
            bind=options.host, allowed=options.allowed_hosts, server="rfqsim proxy"
        )
        self.runner: web.AppRunner | None = None
        self.url = ""
        self._sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()
        self._loader: asyncio.Task[None] | None = None

    async def start(self) -> str:
        await self.forwarder.start()
        await self._load_documents()
        if len(self.documents.loaded) == 0:
            self._loader = asyncio.create_task(self._keep_loading())
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        app.on_shutdown.append(self._close_sockets)
        self.runner = web.AppRunner(app, access_log=None, shutdown_timeout=SHUTDOWN_S)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.options.host, self.options.port)
        try:
            await site.start()
        except OSError as exc:
            raise ListenError(
                f"cannot listen on {self.options.host}:{self.options.port}: {exc.strerror or exc}"
            ) from exc
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        return self.url

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        # The Host is checked here, not left to the upstream: the proxy names the upstream in
        # the Host it forwards, so the upstream's own check would pass a rebound page's request.
        # Cross-site writes are the upstream's to judge (the proxy hands it the Origin).
        refused = refusal_of(
            self.host_check, request.method, request.headers, request.scheme, guards_writes=False
        )
        if refused is not None:
            message, details = refused
            return own_error(request.path, 403, "forbidden", message, details)
        response = await self.forwarder.handle(request)
        if isinstance(response, web.WebSocketResponse):
            self._sockets.add(response)
        return response

    async def _close_sockets(self, app: web.Application) -> None:
        for socket in list(self._sockets):
            with contextlib.suppress(Exception):
                await socket.close(code=1001, message=b"rfqsim proxy stopping")

    async def _load_documents(self) -> None:
        """The upstream's descriptions it has (a deployment without one is checked without)."""
        for path in DOCUMENT_PATHS.values():
            if path in self.documents.loaded:
                continue
            try:
                async with self.forwarder.session.get(
                    self.options.upstream.rstrip("/") + path, timeout=DOCUMENT_TIMEOUT
                ) as answer:
                    if answer.status != 200:
                        continue
                    document = json.loads(await answer.read())
            except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
                log.warning("could not read %s from the upstream: %s", path, exc)
                continue
            if isinstance(document, dict):
                self.documents.load(path, document)

    async def _keep_loading(self) -> None:
        while not self.documents.loaded:
            await asyncio.sleep(DOCUMENT_RETRY_S)
            await self._load_documents()

    async def stop(self) -> None:
        if self._loader is not None:
            self._loader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loader
        if self.runner is not None:
            await self.runner.cleanup()
        await self.forwarder.close()

    def finish(self) -> int:
        """Write the report; the exit status."""
        report.write(self.options.report_dir, self.findings, self.options.upstream)
        found = self.findings
        service = sum(n for (_, side), n in found.counts.items() if side == "service")
        print(
            f"rfqsim proxy: {found.exchanges} exchanges, {found.total} violations "
            f"({service} service, {found.total - service} client), "
            f"{len(found.exercised)} rules exercised; report in {self.options.report_dir}",
            file=self.out,
            flush=True,
        )
        return 1 if self.options.fail_on_violation and found.total else 0


async def run(options: Options, out: TextIO) -> int:
    proxy = Proxy(options, out)
    install_redaction(redactor=proxy.redactor)  # the log lines too, by name and by shape
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    try:
        url = await proxy.start()
        documents = ", ".join(proxy.documents.loaded) or "none yet"
        print(
            f"rfqsim proxy: listening on {url} -> {options.upstream} "
            f"(descriptions: {documents}); Ctrl-C writes the report to {options.report_dir}",
            file=out,
            flush=True,
        )
        await stopping.wait()
    finally:
        await proxy.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return proxy.finish()
