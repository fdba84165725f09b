"""A webhook receiver that counts: https on 127.0.0.1 (certificate from the simulator's local
CA, which its sender trusts), every delivery's signature checked over the raw body, duplicates
told apart by event id, and the delay from the event's ``created`` to its arrival measured.

It is the standard library's threaded HTTP server: under locust's gevent monkey-patching each
connection is a greenlet, so the sink runs inside the master process next to the runner."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rfqkit.timestamps import unix_seconds
from rfqkit.webhook_receiver import (
    server_ssl_context,
)
from rfqkit.webhook_signatures import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    signature_problem,
)

SIGNATURE_TOLERANCE_S = 300
MAX_BODY_BYTES = 1 << 20


@dataclass(frozen=True)
class ReceivedDelivery:
    event_id: str
    event_type: str
    lag_ms: float  # arrival (simulator clock) minus the event's `created`
    size: int
    problem: str | None  # None: signature good


# Called for every delivery, on the sink's connection greenlet.
OnDelivery = Callable[[ReceivedDelivery], None]


@dataclass
class SinkCounts:
    deliveries: int = 0  # every POST that reached the sink
    unique: set[str] = field(default_factory=set)  # event ids with a good signature
    duplicates: int = 0  # good deliveries of an event id seen before
    bad_signatures: int = 0
    by_type: Counter[str] = field(default_factory=Counter)


class _TlsServer(ThreadingHTTPServer):
    daemon_threads = True
    tls: ssl.SSLContext | None = None
    sink: WebhookSink

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, address = self.socket.accept()
        if self.tls is not None:
            # Handshake later, on the connection's own thread (greenlet), not in accept().
            conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, address


class _SinkHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the sender reuses connections
    server: _TlsServer

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(min(length, MAX_BODY_BYTES))
        status = self.server.sink.receive(
            raw, self.headers.get(SIGNATURE_HEADER), self.headers.get(EVENT_ID_HEADER)
        )
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return  # one line per delivery would drown the run's output


class WebhookSink:
    def __init__(
        self,
        cert_pem: str,
        key_pem: str,
        clock_offset_s: float,
        on_delivery: OnDelivery | None = None,
    ) -> None:
        self.secret = ""  # set once the endpoint is registered
        self.clock_offset_s = clock_offset_s  # simulator clock minus ours
        self.on_delivery = on_delivery
        self.counts = SinkCounts()
        self._lock = threading.Lock()  # guards counts across connection greenlets
        self._server = _TlsServer(("127.0.0.1", 0), _SinkHandler)
        self._server.tls = server_ssl_context(cert_pem, key_pem)
        self._server.sink = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"https://{host!s}:{port}/webhooks"

    def start(self) -> WebhookSink:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def receive(self, raw: bytes, signature: str | None, event_id: str | None) -> int:
        now_s = time.time() + self.clock_offset_s  # the simulator's clock: event bodies
        # The signature's t is wall-clock time at sending (docs/decisions.md W3): checked
        # against this machine's clock, whatever the simulator's clock says.
        problem: str | None = signature_problem(
            self.secret, signature, raw, SIGNATURE_TOLERANCE_S, time.time()
        )
        try:
            event = json.loads(raw)
            event_type = str(event.get("type", "unknown"))
            lag_ms = (now_s - unix_seconds(event["created"])) * 1000
            event_id = event_id or str(event.get("id"))
        except (ValueError, KeyError, TypeError, AttributeError):
            event_type, lag_ms, problem = "unparseable", 0.0, problem or "unparseable"
        delivery = ReceivedDelivery(str(event_id), event_type, lag_ms, len(raw), problem)
        with self._lock:
            counts = self.counts
            counts.deliveries += 1
            if problem is not None:
                counts.bad_signatures += 1
            elif delivery.event_id in counts.unique:
                counts.duplicates += 1
            else:
                counts.unique.add(delivery.event_id)
                counts.by_type[event_type] += 1
        if self.on_delivery is not None:
            self.on_delivery(delivery)
        return 400 if problem is not None else 200
