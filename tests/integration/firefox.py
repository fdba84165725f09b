"""Debian's Firefox ESR for the console's browser tests, driven over WebDriver BiDi, which
Firefox speaks itself (`--remote-debugging-port`): no geckodriver, nothing downloaded. Without
Firefox the tests skip with one line, except in CI (CI=true), where a missing browser fails.

Only what the tests need: navigate, evaluate a script, wait until an expression holds; every
script error and console error the page logs, and every URL it requests, are kept."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.integration.browser import assert_clean

WAIT_S = 30.0  # page state the simulator reaches by itself (a live update)
LISTENING = re.compile(r"WebDriver BiDi listening on (ws://\S+)")
# A fresh profile that asks nothing of the network by itself.
PREFS = {
    "app.update.disabledForTesting": True,
    "browser.shell.checkDefaultBrowser": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "toolkit.telemetry.enabled": False,
}


def firefox_path() -> str:
    found = shutil.which("firefox-esr") or shutil.which("firefox")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("firefox is not installed; .ci/run installs firefox-esr with apt-get")
        pytest.skip("firefox is not installed (apt-get install -y firefox-esr)")
    return found


@dataclass
class Page:
    """The browser's one tab, with everything it requested and every error it logged."""

    _socket: aiohttp.ClientWebSocketResponse
    context: str = ""
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _next_id: int = 0
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    async def command(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        answer = asyncio.get_running_loop().create_future()
        self._waiting[self._next_id] = answer
        await self._socket.send_json({"id": self._next_id, "method": method, "params": params})
        message = await asyncio.wait_for(answer, WAIT_S)
        if message.get("type") == "error":
            raise AssertionError(f"{method}: {message.get('error')}: {message.get('message')}")
        return dict(message["result"])

    async def read(self) -> None:
        """Answers to their commands; log entries and requests into the lists."""
        async for frame in self._socket:
            message = frame.json()
            if "id" in message:
                self._waiting.pop(message["id"]).set_result(message)
            elif message.get("method") == "log.entryAdded":
                entry = message["params"]
                if entry.get("level") == "error":
                    self.errors.append(f"{entry.get('type')}: {entry.get('text')}")
            elif message.get("method") == "network.beforeRequestSent":
                self.requests.append(message["params"]["request"]["url"])

    async def goto(self, url: str) -> str:
        """Load `url` and return where the tab ended up."""
        await self.command(
            "browsingContext.navigate", context=self.context, url=url, wait="complete"
        )
        return str(await self.evaluate("window.location.href"))

    async def evaluate(self, expression: str) -> Any:
        result = await self.command(
            "script.evaluate",
            expression=expression,
            target={"context": self.context},
            awaitPromise=True,
        )
        if result["type"] == "exception":
            raise AssertionError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return _value(result["result"])

    async def wait_until(self, expression: str, what: str) -> Any:
        """The value of `expression` once it is truthy (fails after WAIT_S naming `what`)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {WAIT_S:.0f} s: {what}")
            await asyncio.sleep(0.1)

    def check(self, origin: str) -> None:
        """No script or console error; nothing requested outside the simulator."""
        assert_clean(self.errors, self.requests, origin)


def _value(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as Python (strings, numbers, booleans, null and arrays of them)."""
    kind = remote["type"]
    if kind == "array":
        return [_value(item) for item in remote.get("value", [])]
    if kind in ("undefined", "null"):
        return None
    return remote.get("value")


def _start(profile: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """Firefox on a fresh profile, its stderr (where it prints its BiDi address) in a file."""
    profile.mkdir(parents=True, exist_ok=True)
    prefs = "".join(
        f'user_pref("{name}", {str(value).lower() if isinstance(value, bool) else value!r});\n'
        for name, value in PREFS.items()
    )
    (profile / "user.js").write_text(prefs.replace("'", '"'))
    log = profile / "stderr.log"
    command = [firefox_path(), "--headless", "--no-remote", "--profile", str(profile)]
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*command, "--remote-debugging-port", "0"], stdout=subprocess.DEVNULL, stderr=stderr
        )
    return process, log


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.asynccontextmanager
async def firefox(profile: Path) -> AsyncIterator[Page]:
    """A fresh headless Firefox with an empty profile, its tab ready to drive."""
    process, log = await asyncio.to_thread(_start, profile)
    try:
        url = await _listening(log, process)
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(url + "/session", max_msg_size=0) as socket,
        ):
            page = Page(socket)
            reader = asyncio.create_task(page.read())
            try:
                await page.command("session.new", capabilities={})
                await page.command(
                    "session.subscribe", events=["log.entryAdded", "network.beforeRequestSent"]
                )
                tree = await page.command("browsingContext.getTree")
                page.context = tree["contexts"][0]["context"]
                yield page
                await page.command("session.end")
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
    finally:
        await asyncio.to_thread(_stop, process)


async def _listening(log: Path, process: subprocess.Popen[bytes]) -> str:
    """The BiDi address Firefox prints once it accepts sessions."""
    deadline = time.monotonic() + WAIT_S
    while True:
        printed = await asyncio.to_thread(log.read_text, errors="replace")
        found = LISTENING.search(printed)
        if found:
            return found.group(1)
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"firefox did not start: {printed[-2000:]}")
        await asyncio.sleep(0.1)
