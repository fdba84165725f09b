"""What keeps a web page away from rfqsim's local servers (the simulator, the provider sandbox,
the watching proxy), decided here once; each server answers a refusal in its own error shape.

- DNS rebinding: a page on `attacker.example` whose name is re-pointed at 127.0.0.1 becomes
  "same origin" with a local server and may read everything. It cannot change the `Host` header
  its browser sends, so a server answers only Host names that cannot be rebound: `localhost`
  and `*.localhost` (browsers resolve those to loopback themselves), any IP address (no name, so
  nothing to re-point: a page can only be on that address already), the address the server was
  told to bind, and the names the user lists (`--allowed-host`). A request without Host (not a
  browser) passes.
- Cross-site writes: a page on another origin may still send a body-less POST (a form, a
  `fetch` in `no-cors` mode) and cannot read the answer, but the write happens. Control routes
  refuse a state-changing request whose `Sec-Fetch-Site` says another site sent it or whose
  `Origin` is not the server's own. curl and test clients send neither header and pass."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CROSS_SITE_FETCHES = frozenset({"cross-site", "same-site"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
LOGGED_NAMES_MAX = 1000  # refused names remembered for logging once; beyond it, no new lines


def host_name(host: str) -> str:
    """The name of a Host header, lower case, without port, brackets or a final dot:
    `Attacker.Example.:8080` -> `attacker.example`, `[::1]:8080` -> `::1`."""
    value = host.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        value = value[1:end] if end > 0 else value[1:]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def never_rebound(name: str) -> bool:
    """A name no DNS answer can point somewhere else: loopback names and IP addresses."""
    return name == "localhost" or name.endswith(".localhost") or is_ip_address(name)


def listed(name: str, allowed: Iterable[str]) -> bool:
    """`name` is one of `allowed`; an entry with a leading dot (`.corp.example`) also allows
    every name under it, as Vite's `server.allowedHosts` does."""
    for entry in allowed:
        entry = host_name(entry) if not entry.startswith(".") else "." + host_name(entry[1:])
        if name == entry or (entry.startswith(".") and (name == entry[1:] or name.endswith(entry))):
            return True
    return False


@dataclass
class HostCheck:
    """The Host names one server answers. `bind` is the address it was told to listen on (its
    own calls, and a user who binds a LAN name, use it); `allowed` the user's `--allowed-host`."""

    bind: str
    allowed: tuple[str, ...] = ()
    server: str = "rfqsim"  # names the server in log lines
    flag: str = "--allowed-host"  # how this server is told a name (in the refusal's hint)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("rfqsim.guard"))
    _logged: set[str] = field(default_factory=set)

    def allows(self, host: str | None) -> bool:
        if not host or not host.strip():
            return True  # no Host: not a browser, nothing to rebind
        name = host_name(host)
        return never_rebound(name) or listed(name, (self.bind, *self.allowed))

    def refusal(self, host: str) -> tuple[str, dict[str, str]]:
        """The refusal's message and details (the same for every server), logged once per name:
        a page that keeps trying fills no log."""
        name = host_name(host)
        if name not in self._logged and len(self._logged) < LOGGED_NAMES_MAX:
            self._logged.add(name)
            self.log.warning(
                "%s refused a request for Host %r: not a loopback name or address and not "
                "listed with %s (a web page re-pointing its name at this machine looks like "
                "this); further requests for this name are refused silently",
                self.server,
                name[:200],
                self.flag,
            )
        shown = name[:200]
        message = (
            f"Host {shown!r} is not allowed: this server answers loopback names, IP addresses "
            f"and the names it is started with; to reach it by this name, start it with "
            f"{self.flag} {shown}"
        )
        return message, {"reason": "host_not_allowed", "host": shown}


def origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin or URL, default ports made explicit; None for an
    opaque origin (`null`) or what does not parse."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname:
        return None
    return scheme, parts.hostname.rstrip("."), port or DEFAULT_PORTS.get(scheme, 0)


def cross_site_reason(
    method: str, headers: Mapping[str, str], scheme: str, host: str | None
) -> str | None:
    """Why a request must be refused as sent by another site, or None. Only state-changing
    methods are judged: `Sec-Fetch-Site: cross-site|same-site` (set by the browser, a page
    cannot forge it) or an `Origin` that is not `scheme://host` of this request."""
    if method.upper() in SAFE_METHODS:
        return None
    fetch_site = headers.get("Sec-Fetch-Site", "").strip().lower()
    if fetch_site in CROSS_SITE_FETCHES:
        return f"sec_fetch_site_{fetch_site.replace('-', '_')}"
    origin = headers.get("Origin")
    if origin is None:
        return None
    own = origin_of(f"{scheme}://{host}") if host else None
    if own is None or origin_of(origin) != own:
        return "foreign_origin"
    return None


CROSS_SITE_MESSAGE = (
    "A state-changing request from another site is refused: control requests must come from "
    "this server's own pages or from a client that sends no Origin (curl, test clients)"
)


def refusal_of(
    check: HostCheck,
    method: str,
    headers: Mapping[str, str],
    scheme: str,
    *,
    guards_writes: bool,
) -> tuple[str, dict[str, str]] | None:
    """The message and details a server refuses the request with (403), or None to answer it:
    the Host check for every request, the cross-site check where `guards_writes` (the route's
    policy). Each server renders the refusal in its own error shape."""
    host = headers.get("Host")
    if not check.allows(host):
        assert host is not None
        return check.refusal(host)
    if guards_writes:
        reason = cross_site_reason(method, headers, scheme, host)
        if reason is not None:
            return CROSS_SITE_MESSAGE, {"reason": reason}
    return None
