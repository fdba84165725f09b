"""A minimal HTTPS webhook receiver for the delivery benchmark, in its own process.

Usage: python -m bench.webhook_receiver CERT KEY PORT_FILE
"""

from __future__ import annotations

import asyncio
import ssl
import sys
from pathlib import Path

from aiohttp import web


async def receive(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(status=204)


async def main(cert: Path, key: Path, port_file: Path) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    app = web.Application()
    app.router.add_post("/hook", receive)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    await asyncio.to_thread(port_file.write_text, str(runner.addresses[0][1]))
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
