"""Who is calling: an API key (and its partner), or a keyless client identified by IP."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.errors import Forbidden, InvalidRequest
from simulator.services.access.keys import ApiKey


@dataclass(frozen=True)
class Caller:
    ip: str  # the socket peer (or the trusted proxy's X-Forwarded-For client)
    key: ApiKey | None  # the authenticated key, if one was presented

    @property
    def identity(self) -> str:
        """The bucket for rate limits and outstanding slots, and the binding of proof nonces and
        grants: the key, else the client IP (shared addresses share it, as the spec says)."""
        return f"key:{self.key.key_id}" if self.key is not None else f"ip:{self.ip}"

    @property
    def partner_id(self) -> str | None:
        return self.key.partner_id if self.key is not None else None

    def has_scope(self, scope: str) -> bool:
        return self.key is not None and scope in self.key.scopes

    def require_scope(self, scope: str) -> None:
        if self.key is not None and scope not in self.key.scopes:
            if self.key.is_maker_credential:
                raise Forbidden("Maker credentials cannot call taker endpoints")
            raise Forbidden(
                f"API key lacks scope {scope}", details={"reason": "missing_scope", "scope": scope}
            )

    def require_chain_environment(self, chain_id: int, chain_environment: str) -> None:
        """A test key on a live chain (or the reverse) is 400."""
        if self.key is not None and self.key.environment != chain_environment:
            raise InvalidRequest(
                f"A {self.key.environment} key cannot use chain {chain_id} ({chain_environment})",
                details={"reason": "environment_mismatch", "chainId": chain_id},
            )
