"""The fake licensed ramp provider (docs/provider-sandbox.md): its own aiohttp app, API, state
and Anvil access. `start_sandbox(SandboxConfig(...))` runs it on its own port."""

from provider_sandbox.config import SandboxChain, SandboxConfig
from provider_sandbox.runtime import RunningSandbox, start_sandbox

__all__ = ["RunningSandbox", "SandboxChain", "SandboxConfig", "start_sandbox"]
