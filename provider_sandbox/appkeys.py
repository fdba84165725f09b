"""Typed aiohttp application keys of the sandbox app."""

from __future__ import annotations

from aiohttp import web

from provider_sandbox.core import Sandbox

SANDBOX: web.AppKey[Sandbox] = web.AppKey("provider_sandbox")
