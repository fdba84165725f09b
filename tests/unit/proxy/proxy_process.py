"""rfqsim proxy as a real process: started with its flags, its listening line read, for the
proxy's command tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

RFQSIM = Path(sys.executable).with_name("rfqsim")
WAIT_S = 30.0


async def start_proxy(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        str(RFQSIM), "proxy", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), WAIT_S)).decode()
    assert "listening on http://" in line, line
    url = line.split("listening on ", 1)[1].split(" ", 1)[0]
    return process, url
