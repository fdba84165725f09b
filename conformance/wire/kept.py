"""Connections a client keeps open between its requests (conformance.wire.client
`Client.kept_alive`): what a test of the per-instance limiters reads through."""

from __future__ import annotations

import http.client
import threading


class KeptConnections:
    """One connection per endpoint and client address, kept open between requests (HTTP/1.1
    keep-alive) as an HTTP library's session keeps it, and shared by the test's threads one
    request at a time. Behind a connection-level balancer every request on it reaches one
    instance of the service: what a test of the limiters needs, the spec enforcing them per
    running instance."""

    def __init__(self) -> None:
        self._held: dict[object, http.client.HTTPConnection] = {}
        self._turns: dict[object, threading.Lock] = {}
        self._lock = threading.Lock()

    def turn(self, where: object) -> threading.Lock:
        """Held while one request uses the connection to `where`."""
        with self._lock:
            return self._turns.setdefault(where, threading.Lock())

    def take(self, where: object) -> http.client.HTTPConnection | None:
        with self._lock:
            return self._held.get(where)

    def keep(self, where: object, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            self._held[where] = connection

    def forget(self, where: object) -> None:
        with self._lock:
            self._held.pop(where, None)

    def close(self) -> None:
        """Close every connection kept."""
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for connection in held:
            connection.close()
