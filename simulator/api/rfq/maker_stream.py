"""WSS /v2/maker/stream: the maker side of the venue (protocol in docs/maker-protocol.md). The
handshake passes the access middleware like any API call (maker credential, scope
maker:stream); this handler refuses what is not a maker credential, upgrades the connection and
hands the socket to the maker sessions (adapters/rfq/maker_stream.py)."""

from __future__ import annotations

from aiohttp import web
from eth_utils.address import to_checksum_address

from simulator.api.http.appkeys import CALLER, MAKER_SESSIONS
from simulator.api.http.forwarding import FORWARDING
from simulator.api.http.routes import Access, Operation, RouteTable
from simulator.errors import Forbidden, InternalError, RateLimited, Unauthorized

MAX_MESSAGE_BYTES = 256 * 1024
CLOSE_HANDSHAKE_TIMEOUT_S = 5.0  # a closing socket waits this long for the maker's close frame


async def maker_stream(request: web.Request) -> web.StreamResponse:
    key = request[CALLER].key
    if key is None:
        raise Unauthorized("A maker credential is required", details={"reason": "api_key_required"})
    if not key.is_maker_credential or key.maker_wallet is None:
        raise Forbidden("Only maker credentials may open the maker stream")
    ws = web.WebSocketResponse(
        max_msg_size=MAX_MESSAGE_BYTES, autoping=True, timeout=CLOSE_HANDSHAKE_TIMEOUT_S
    )
    await ws.prepare(request)
    await request.app[MAKER_SESSIONS].serve(
        ws,
        maker_id=key.key_id,
        wallet=to_checksum_address(key.maker_wallet),
        environment=key.environment,
        fills_book="maker:fill" in key.scopes,
        relay_headers=_relay_headers(request),
    )
    return ws


def _relay_headers(request: web.Request) -> dict[str, str] | None:
    """Several instances: a maker that connected here answers the others' auctions too,
    through links that send these headers (a link another instance opened is not linked
    further)."""
    forwarding = request.app.get(FORWARDING)
    if forwarding is None or forwarding.sent_on(request):
        return None
    return forwarding.hop_headers(request, "Authorization", "X-API-Key")


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/v2/maker/stream",
            handler=maker_stream,
            operation_id="makerStream",
            summary="Maker stream (WebSocket upgrade); protocol in docs/maker-protocol.md",
            document="v2",
            tags=("maker",),
            responses={101: None},
            errors=(Unauthorized, Forbidden, RateLimited, InternalError),
            security=("bearerKey", "apiKeyHeader"),
            access=Access(scope="maker:stream", keyless=False),
            envelope=False,
            gated=False,  # a socket lives for hours: a reset must not wait for it
            placement="here",
        )
    )
