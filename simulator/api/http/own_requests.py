"""The simulator's own requests: the simulated fleet's v1 calls, made over the real API with the
keys the simulator gave it (runtime/makers.py). They pass a closed state gate while a reset
restarts the fleet, are exempt from injected faults, and stay out of the request journal (the
filling operator reads the book every round: a client's own requests would drown in them)."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import ACCESS


def from_the_fleet(request: web.Request) -> bool:
    """A request with one of the keys the simulator gave its own fleet (makers/book.py sends it
    as a bearer token)."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    return scheme == "Bearer" and key in request.app[ACCESS].faults.own_keys
