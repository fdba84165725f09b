"""What the ramp offers: the providers (read live from their capability switches), their payout
banks (cached), account resolution, and the capability checks every transfer passes (403).

Spec 2-ramp-v2 "Provider", "Bank", Errors 403/404; docs/ramp.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from simulator.clock import Clock
from simulator.errors import Forbidden, InvalidRequest, NotFound, UpstreamError
from simulator.services.ramp.failures import provider_failure
from simulator.services.ramp.ports import (
    Bank,
    Capabilities,
    ProviderError,
    ProviderNotFound,
    RampProvider,
    Side,
)


class ProviderDirectory:
    """Provider id -> its port. The ids are known from settings when the app is built; the
    ports are attached by the provider runtime once the provider (sandbox) is up."""

    def __init__(self, provider_ids: Iterable[str]) -> None:
        self.ids: tuple[str, ...] = tuple(provider_ids)  # every provider the ramp serves
        self._attached: dict[str, RampProvider] = {}  # ports of providers started so far

    def attach(self, provider: RampProvider) -> None:
        if provider.provider_id not in self.ids:
            raise ValueError(f"provider {provider.provider_id!r} is not configured")
        self._attached[provider.provider_id] = provider

    def detach(self, provider_id: str) -> None:
        self._attached.pop(provider_id, None)

    def knows(self, provider_id: str) -> bool:
        return provider_id in self.ids

    def attached(self, provider_id: str) -> RampProvider | None:
        return self._attached.get(provider_id)

    def get(self, provider_id: str) -> RampProvider:
        """The provider's port: 404 for an id the ramp does not serve, 502 while it has no
        running client (start-up, shutdown)."""
        if provider_id not in self.ids:
            raise NotFound(
                f"Unknown provider {provider_id!r}",
                details={"reason": "unknown_provider", "providers": list(self.ids)},
            )
        provider = self._attached.get(provider_id)
        if provider is None:
            raise UpstreamError(
                "The ramp provider is not connected yet; retry",
                details={"reason": "provider_unreachable", "provider": provider_id},
            )
        return provider


@dataclass(frozen=True)
class CatalogSettings:
    production: bool  # `--environment production`: the sandbox flag is refused (400)
    banks_cache_s: float = 900.0  # spec: banks cached service-side for 15 minutes


def _forbidden(message: str, reason: str, **extra: object) -> Forbidden:
    return Forbidden(message, details={"reason": reason, **extra})


def unknown_bank(bank_code: str) -> InvalidRequest:
    message = f"Unknown bankCode {bank_code!r}; use a code from GET /v2/ramp/banks"
    return InvalidRequest.for_field("bankCode", message, "unknown", summary=message)


class RampCatalog:
    def __init__(self, clock: Clock, providers: ProviderDirectory, settings: CatalogSettings):
        self._clock = clock
        self.providers = providers
        self.settings = settings
        self._banks: dict[str, tuple[float, tuple[Bank, ...]]] = {}  # provider -> (read at, list)
        # One banks fetch per provider at a time: concurrent readers of a cold cache share it.
        self._bank_locks: dict[str, asyncio.Lock] = {}

    # -- the sandbox flag and the provider ---------------------------------------------------

    def check_sandbox_flag(self, sandbox: bool) -> None:
        """RA3: production refuses the flag outright (400)."""
        if sandbox and self.settings.production:
            raise InvalidRequest(
                "The sandbox flag is refused in production",
                details={"reason": "sandbox_not_allowed"},
            )

    def provider(self, provider_id: str) -> RampProvider:
        return self.providers.get(provider_id)

    async def capabilities(self, provider_id: str) -> Capabilities:
        """Live switches, read from the provider on every call (never cached: they change
        without notice). 404 unknown provider, 502 unreachable."""
        provider = self.provider(provider_id)
        try:
            return await provider.capabilities()
        except ProviderError as exc:
            raise provider_failure(provider_id, exc) from exc

    def _listed(self, caps: Capabilities) -> Capabilities:
        # Spec: sandboxChainIds is empty in production (there is no test account to use).
        return dataclasses.replace(caps, sandbox_chains=()) if self.settings.production else caps

    async def listings(
        self,
        *,
        fiat: str | None = None,
        token: str | None = None,
        chain_id: int | None = None,
        side: Side | None = None,
        sandbox: bool = False,
    ) -> list[Capabilities]:
        """GET /providers: every provider someone can run the corridor with now, filtered.
        RA26: an unreachable provider is left out (an empty list), not a 502."""
        self.check_sandbox_flag(sandbox)

        async def read(provider_id: str) -> Capabilities | None:
            provider = self.providers.attached(provider_id)
            if provider is None:
                return None
            try:
                return await provider.capabilities()
            except ProviderError:
                return None

        found = await asyncio.gather(*(read(pid) for pid in self.providers.ids))
        listed = []
        for caps in found:
            if caps is None or not caps.enabled or not caps.sides:
                continue  # switched off: looks like nobody runs the corridor (spec)
            caps = self._listed(caps)
            chains = caps.sandbox_chains if sandbox else caps.chains
            if not chains:
                continue
            if fiat is not None and caps.fiat.upper() != fiat.upper():
                continue
            if token is not None and caps.token.upper() != token.upper():
                continue
            if chain_id is not None and chain_id not in chains:
                continue
            if side is not None and side not in caps.sides:
                continue
            listed.append(caps)
        return listed

    async def open_provider(self, provider_id: str, *, sandbox: bool) -> Capabilities:
        """The provider's live switches, refusing (403) a provider switched off or a sandbox
        request to a provider with no test account."""
        self.check_sandbox_flag(sandbox)
        caps = await self.capabilities(provider_id)
        if not caps.enabled:
            raise _forbidden(
                f"Provider {provider_id} is switched off", "provider_disabled", provider=provider_id
            )
        if sandbox and not self._listed(caps).sandbox_chains:
            raise _forbidden(
                f"Provider {provider_id} has no sandbox account",
                "sandbox_not_available",
                provider=provider_id,
            )
        return caps

    async def require_sandbox_chain(self, provider_id: str, chain_id: int) -> Capabilities:
        """A sandbox request on a chain outside sandboxChainIds is 403."""
        caps = await self.open_provider(provider_id, sandbox=True)
        if chain_id not in caps.sandbox_chains:
            raise _forbidden(
                f"Provider {provider_id} has no sandbox account on chain {chain_id}",
                "sandbox_not_available",
                provider=provider_id,
                chainId=chain_id,
                sandboxChainIds=list(caps.sandbox_chains),
            )
        return caps

    async def require_capability(
        self,
        provider_id: str,
        *,
        side: Side,
        fiat: str,
        token: str,
        chain_id: int,
        sandbox: bool,
    ) -> Capabilities:
        """Spec: provider, side, fiat, token and chainId must match an advertised capability,
        else 403; a switched-off provider is 403; 404 unknown provider; 502 unreachable."""
        caps = await self.open_provider(provider_id, sandbox=sandbox)
        if caps.fiat.upper() != fiat.upper() or caps.token.upper() != token.upper():
            raise _forbidden(
                f"Provider {provider_id} does not offer {fiat}/{token}",
                "corridor_not_offered",
                fiat=caps.fiat,
                token=caps.token,
            )
        if side not in caps.sides:
            raise _forbidden(
                f"Provider {provider_id} does not offer {side} now",
                "side_not_offered",
                sides=list(caps.sides),
            )
        chains = caps.sandbox_chains if sandbox else caps.chains
        if chain_id not in chains:
            reason = "sandbox_not_available" if sandbox else "chain_not_offered"
            raise _forbidden(
                f"Provider {provider_id} does not settle on chain {chain_id}"
                + (" in the sandbox" if sandbox else " now"),
                reason,
                chainIds=list(chains),
            )
        return caps

    # -- banks ----------------------------------------------------------------------------

    async def banks(self, provider_id: str, *, sandbox: bool = False) -> tuple[Bank, ...]:
        """The provider's payout banks, cached `banks_cache_s` on the simulator clock."""
        await self.open_provider(provider_id, sandbox=sandbox)
        return await self._cached_banks(provider_id)

    async def _cached_banks(self, provider_id: str) -> tuple[Bank, ...]:
        lock = self._bank_locks.setdefault(provider_id, asyncio.Lock())
        async with lock:
            cached = self._banks.get(provider_id)
            now = self._clock.time()
            if cached is not None and now - cached[0] < self.settings.banks_cache_s:
                return cached[1]
            try:
                banks = tuple(await self.provider(provider_id).banks())
            except ProviderError as exc:
                raise provider_failure(provider_id, exc) from exc
            self._banks[provider_id] = (self._clock.time(), banks)
            return banks

    async def bank(self, provider_id: str, bank_code: str) -> Bank:
        """A bank of the (cached) list, or 400 naming bankCode."""
        for bank in await self._cached_banks(provider_id):
            if bank.code == bank_code:
                return bank
        raise unknown_bank(bank_code)

    async def resolve(
        self, provider_id: str, bank_code: str, account_number: str, *, sandbox: bool = False
    ) -> str:
        """The account holder's name. 400 for a bank not in the list; 422 provider_refused with
        the provider's sentence when it cannot verify the account."""
        await self.open_provider(provider_id, sandbox=sandbox)
        await self.bank(provider_id, bank_code)
        try:
            return await self.provider(provider_id).resolve_account(bank_code, account_number)
        except ProviderNotFound as exc:
            raise unknown_bank(bank_code) from exc
        except ProviderError as exc:
            raise provider_failure(provider_id, exc) from exc
