"""Debian's chromium driven by Playwright for the console's browser tests: never a browser of
Playwright's own (nothing is downloaded). Without chromium the tests skip with one line, except
in CI (CI=true), where a missing browser fails the run."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Request, sync_playwright

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
WAIT_MS = 30_000  # page state the simulator reaches by itself (a live update, a webhook retry)
SCREENSHOTS_ENV = "RFQSIM_CONSOLE_SCREENSHOTS"  # where to keep screenshots (`just screenshots`)


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; .ci/run installs it with apt-get")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return found


@contextmanager
def chromium(user_data: Path, extra_args: tuple[str, ...] = ()) -> Iterator[BrowserContext]:
    """A fresh headless chromium with an empty profile (`extra_args`: more switches, e.g.
    `--host-resolver-rules` for a hostile name that resolves to loopback)."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data),
            executable_path=chromium_path(),
            args=[*CHROMIUM_ARGS, *extra_args],
            headless=True,
            viewport={"width": 1300, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@dataclass
class Watched:
    """A page with everything it requested and every script error it raised."""

    page: Page
    origin: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def check(self) -> None:
        assert_clean(self.errors, self.requests, self.origin)


def assert_clean(errors: list[str], requests: list[str], origin: str) -> None:
    """No script or console error; nothing requested outside the simulator (any browser)."""
    assert errors == [], errors
    foreign = [url for url in requests if not url.startswith((origin + "/", "data:"))]
    assert foreign == [], foreign


def watch(context: BrowserContext, origin: str) -> Watched:
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    watched = Watched(page, origin)

    def on_request(request: Request) -> None:
        watched.requests.append(request.url)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.errors.append(f"console: {message.text}")

    page.on("request", on_request)
    page.on("console", on_console)
    page.on("pageerror", lambda error: watched.errors.append(f"pageerror: {error}"))
    return watched


def screenshot_dir(tmp: Path) -> Path:
    """docs/console when `just screenshots` asks for it; a temporary directory otherwise."""
    wanted = os.environ.get(SCREENSHOTS_ENV)
    target = Path(wanted) if wanted else tmp
    target.mkdir(parents=True, exist_ok=True)
    return target
