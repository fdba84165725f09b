"""The webhook HTTPS POST: one aiohttp ClientSession for every delivery (connections are kept
alive and reused), with an SSL context that trusts the system CAs plus the simulator's local CA,
so receivers on this machine can serve certificates from `/_sim/webhooks/certificates`."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping

import aiohttp

from simulator import __version__
from simulator.adapters.webhooks.local_ca import LocalCa
from simulator.services.webhooks.ports import SendResult

USER_AGENT = f"rfqsim-webhooks/{__version__}"
RESPONSE_READ_LIMIT = 64 * 1024  # a receiver's answer is read this far, then dropped


def ssl_context(ca_pem: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context()  # system CAs, hostname checks, modern protocols
    context.load_verify_locations(cadata=ca_pem.decode())
    return context


class AiohttpWebhookSender:
    def __init__(self, ca: LocalCa, *, max_connections: int, max_per_host: int) -> None:
        self._ca = ca
        self._max_connections = max_connections
        self._max_per_host = max_per_host
        self._session: aiohttp.ClientSession | None = None  # created on first use, in the loop
        self._lock = asyncio.Lock()  # guards the one-time creation of _session

    async def _get_session(self) -> aiohttp.ClientSession:
        if self._session is not None:
            return self._session
        async with self._lock:
            if self._session is None:
                context = ssl_context(await self._ca.ca_pem())
                connector = aiohttp.TCPConnector(
                    ssl=context, limit=self._max_connections, limit_per_host=self._max_per_host
                )
                # trust_env=False: proxy variables must not reroute deliveries to loopback.
                self._session = aiohttp.ClientSession(
                    connector=connector,
                    trust_env=False,
                    headers={"User-Agent": USER_AGENT},
                    auto_decompress=False,
                )
            return self._session

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> SendResult:
        session = await self._get_session()
        try:
            async with session.post(
                url,
                data=body,
                headers=dict(headers),
                timeout=aiohttp.ClientTimeout(total=timeout_s),
                allow_redirects=False,  # a redirect is a non-2xx answer, retried like one
            ) as response:
                await response.content.read(RESPONSE_READ_LIMIT)
                return SendResult(status=response.status)
        except TimeoutError:
            return SendResult(status=None, error="timeout")
        except aiohttp.ClientError as exc:
            return SendResult(status=None, error=f"connection_error: {type(exc).__name__}: {exc}")
        except (OSError, ssl.SSLError) as exc:
            return SendResult(status=None, error=f"connection_error: {type(exc).__name__}: {exc}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
