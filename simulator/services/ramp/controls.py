"""`/_sim/ramp`: the provider sandbox's controls (docs/provider-sandbox.md `/sandbox`) forwarded
under the simulator's own ids, so a test can pay in, stall, fail or advance *our* transfer
without knowing the provider's id for it. The sandbox is reached through the `SandboxControls`
port (the provider's HTTP client implements it); its answers come back as they are, and its
refusals become the spec's errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from simulator.errors import Conflict, InvalidRequest, NotFound, UpstreamError
from simulator.services.ramp.customers import RampCustomers
from simulator.services.ramp.failures import provider_unreachable
from simulator.services.ramp.ports import ProviderError, SandboxControls
from simulator.services.ramp.reads import RampReads

LOOPBACK = "127.0.0.1"


def webhook_url(api_url: str, provider_id: str) -> str:
    """The simulator's inbound provider-webhook URL; a wildcard bind address is reached on
    loopback (the sandbox runs on this machine)."""
    parts = urlsplit(api_url)
    host = parts.hostname or LOOPBACK
    if host in ("0.0.0.0", "::", ""):
        host = LOOPBACK
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, f"/_provider/{provider_id}/webhooks", "", ""))


@dataclass(frozen=True)
class SandboxLink:
    """Where the provider sandbox is while the app runs (set by the provider's runtime)."""

    url: str  # its base URL (API under /api/v1, controls under /sandbox)
    controls: SandboxControls  # the port its controls are reached through
    in_process: bool  # started by this simulator (False with --provider-url)


@dataclass(frozen=True)
class RampDescription:
    provider: str  # the provider id the ramp serves
    url: str | None  # the sandbox's base URL; None before start-up
    in_process: bool
    webhook_url: str  # where the sandbox's webhooks must go
    webhook_secret: str  # what they are signed with


class RampControls:
    def __init__(
        self, provider_id: str, webhook_secret: str, reads: RampReads, customers: RampCustomers
    ) -> None:
        self._provider_id = provider_id
        self._webhook_secret = webhook_secret
        self._reads = reads
        self._customers = customers
        self.link: SandboxLink | None = None  # set while the app runs, after the chains are up

    @property
    def sandbox_url(self) -> str | None:
        """The sandbox's base URL (in-process or `--provider-url`); None before start-up."""
        return self.link.url if self.link is not None else None

    def describe(self, api_url: str) -> RampDescription:
        return RampDescription(
            provider=self._provider_id,
            url=self.sandbox_url,
            in_process=self.link is not None and self.link.in_process,
            webhook_url=webhook_url(api_url, self._provider_id),
            webhook_secret=self._webhook_secret,
        )

    def _controls(self) -> SandboxControls:
        if self.link is None:
            raise UpstreamError(
                "The ramp provider is not running", details={"reason": "provider_unreachable"}
            )
        return self.link.controls

    async def forward(self, method: str, path: str, body: Any = None) -> Any:
        """One sandbox control call; its answer as it is, or the spec's error for a refusal."""
        controls = self._controls()
        try:
            status, answer = await controls.control(method, path, body)
        except ProviderError as exc:
            raise provider_unreachable(controls.provider_id) from exc
        if 200 <= status < 300 and answer is not None:
            return answer
        error = (answer or {}).get("error")
        message = error.get("message") if isinstance(error, dict) else None
        text = message if isinstance(message, str) and message else f"sandbox answered {status}"
        if status == 400:
            raise InvalidRequest(text, details={"reason": "sandbox_refused"})
        if status == 404:
            raise NotFound(text)
        if status == 409:
            raise Conflict(text)
        raise UpstreamError(text, details={"reason": "sandbox_failed", "status": status})

    async def transfer_action(self, transfer_id: str, action: str, body: Any = None) -> Any:
        """`action` (pay-in, advance, stall, fail, cancel) on our transfer or the provider's."""
        remote = await self._provider_transfer_id(transfer_id)
        return await self.forward("POST", f"transfers/{remote}/{action}", body)

    async def kyc_outcome(self, customer_id: str, body: Any) -> Any:
        remote = self._provider_customer_id(customer_id)
        return await self.forward("POST", f"customers/{remote}/kyc/outcome", body)

    async def _provider_transfer_id(self, transfer_id: str) -> str:
        found = self._reads.provider_transfer_id(transfer_id)
        if found is not None:
            return found
        # Our transfer id is the provider's `reference`: ask the provider (also covers a
        # transfer the reads do not know); anything else is taken to be the provider's own id.
        controls = self._controls()
        try:
            remote = await controls.transfer_by_reference(transfer_id)
        except ProviderError as exc:
            raise provider_unreachable(controls.provider_id) from exc
        return remote.id if remote is not None else transfer_id

    def _provider_customer_id(self, customer_id: str) -> str:
        for record in self._customers.records():
            if record.id == customer_id:
                if record.provider_customer_id is None:
                    raise Conflict(
                        f"Customer {customer_id} has no provider profile",
                        details={"reason": "no_provider_profile"},
                    )
                return record.provider_customer_id
        return customer_id
