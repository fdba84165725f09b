"""The baseline: a bare aiohttp JSON handler with no middleware, run as its own process.

Usage: python -m bench.baseline_server PORT_FILE
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from aiohttp import web


async def health(_: web.Request) -> web.Response:
    return web.json_response({"data": {"status": "ok"}})


async def main(port_file: Path) -> None:
    app = web.Application()
    app.router.add_get("/v2/health", health)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    await asyncio.to_thread(port_file.write_text, str(runner.addresses[0][1]))
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
