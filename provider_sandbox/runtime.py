"""Start and stop a sandbox on its own port: used in-process by `rfqsim serve`, by the
standalone command and by the tests."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from provider_sandbox.app import create_sandbox_app
from provider_sandbox.clock import SandboxClock
from provider_sandbox.config import SandboxConfig
from provider_sandbox.core import Sandbox
from provider_sandbox.state import SandboxState


class RunningSandbox:
    def __init__(self, url: str, sandbox: Sandbox, runner: web.AppRunner) -> None:
        self.url = url  # e.g. http://127.0.0.1:PORT (API under /api/v1, controls under /sandbox)
        self.sandbox = sandbox  # the live object, for tests and for the simulator's info page
        self._runner = runner

    @property
    def state(self) -> SandboxState:
        return self.sandbox.state

    @property
    def api_key(self) -> str:
        return self.sandbox.config.api_key

    def set_webhook_target(self, url: str, secret: str) -> None:
        """Where status webhooks go from now on (the simulator knows its URL only once bound)."""
        self.sandbox.webhooks.url = url
        self.sandbox.webhooks.secret = secret

    async def stop(self) -> None:
        await self._runner.cleanup()


async def start_sandbox(
    config: SandboxConfig, time_source: Callable[[], float] | None = None
) -> RunningSandbox:
    sandbox = Sandbox(config, SandboxClock(time_source))
    runner = web.AppRunner(create_sandbox_app(sandbox), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, config.host, config.port)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    host, port = runner.addresses[0][:2]
    return RunningSandbox(f"http://{host}:{port}", sandbox, runner)
