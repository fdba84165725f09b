"""What the suite runs against: a given base URL, or an ``rfqsim serve`` it starts itself."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.deployment.sim_control import SimControl
from conformance.wire.client import Client, request
from conformance.wire.inputs import InputError, Inputs, combine, inputs_of
from conformance.wire.needs import InputProblem
from conformance.wire.proxy_process import ProxyProcess
from conformance.wire.public_receiver import local_state_dir, loopback_public_webhook
from conformance.wire.server import DEFAULT_START_TIMEOUT, SimulatorProcess, find_rfqsim_bin

SIMULATOR_NAME = "rfqsim"
_DETECT_TIMEOUT = 10.0


class TargetError(RuntimeError):
    """The target could not be reached or started."""


@dataclass(frozen=True)
class Target:
    """The service under test, as far as a black-box client can know it."""

    base_url: str  # service root, no trailing slash: http://127.0.0.1:8080
    is_simulator: bool  # GET /_sim/info answered {"simulator": "rfqsim"}
    info: Mapping[str, Any] | None  # ready file or /_sim/info data; None for other targets
    rpc_urls: Mapping[int, str] = field(default_factory=dict)  # chain id -> JSON-RPC URL
    started_by_harness: bool = False  # True when the harness ran `rfqsim serve` itself
    inputs: Inputs = field(default_factory=Inputs)  # keys, wallets, webhook URL given to us
    # Facts found out once per session (the discovered venue), keyed by what they are.
    cache: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def controllable(self) -> bool:
        """Whether the target has the simulator's /_sim control API."""
        return self.is_simulator

    def client(self, **kwargs: Any) -> Client:
        return Client(self.base_url, **kwargs)

    def sim(self) -> SimControl:
        return SimControl(self.client())

    def chains(self) -> list[Mapping[str, Any]]:
        """The chains as ``/_sim/info`` describes them; without it, discovered from public
        surfaces once per session (:mod:`conformance.deployment.discovery`)."""
        if self.info is not None:
            chains = self.info.get("chains") or []
            return [c for c in chains if isinstance(c, Mapping)]
        if "chains" not in self.cache:
            from conformance.deployment.discovery import discover_chains  # imports this module

            self.cache["chains"] = discover_chains(
                self.client(), self.resolved_inputs(), self.rpc_urls
            )
        discovered: list[Mapping[str, Any]] = self.cache["chains"]
        return discovered

    def resolved_inputs(self) -> Inputs:
        """The given inputs with the scopes of undeclared keys probed, once per session: a key
        whose scopes are probed counts exactly like one whose scopes are written out."""
        cached = self.cache.get("inputs")
        if isinstance(cached, InputError):  # probing failed once: say so again, do not re-probe
            raise InputError(str(cached))
        if not isinstance(cached, Inputs):
            try:
                cached = self.inputs.with_probed_scopes(self.client())
            except InputError as exc:
                self.cache["inputs"] = exc
                raise
            self.cache["inputs"] = cached
        return cached

    def wallets(self) -> list[Mapping[str, str]]:
        """Funded wallets (``address``, ``private_key``): the simulator's demo wallets, else
        the taker wallets the QA team gave."""
        if self.info is not None and self.info.get("demo_wallets"):
            return [dict(w) for w in self.info["demo_wallets"]]
        return [
            {"address": w.address, "private_key": w.private_key} for w in self.inputs.taker_wallets
        ]

    def chain(self, chain_id: int) -> Mapping[str, Any]:
        for chain in self.chains():
            if chain.get("chain_id") == chain_id:
                return chain
        raise self.no_rpc(chain_id)

    def rpc_url(self, chain_id: int) -> str:
        try:
            return self.rpc_urls[chain_id]
        except KeyError:
            raise self.no_rpc(chain_id) from None

    def no_rpc(self, chain_id: int) -> Exception:
        """What a test that reaches for an unknown chain gets: an input problem (the QA team
        gave no RPC URL of it) on a foreign target, a failure on a simulator (its info lists
        every chain it serves)."""
        if self.info is not None:
            return KeyError(f"chain {chain_id} not in the target's info")
        return InputProblem(
            "rpc",
            f"--rpc-url {chain_id}=URL: the chain's tokens and contracts are read on chain",
        )


def parse_rpc_urls(values: Sequence[str]) -> dict[int, str]:
    """``["56=http://...", "97=http://..."]`` -> ``{56: ..., 97: ...}``."""
    urls: dict[int, str] = {}
    for value in values:
        chain, sep, url = value.partition("=")
        if not sep or not chain.strip().isdigit() or not url.strip():
            raise ValueError(f"--rpc-url expects CHAIN=URL, got {value!r}")
        urls[int(chain)] = url.strip()
    return urls


def _rpc_urls_from_info(info: Mapping[str, Any] | None) -> dict[int, str]:
    urls: dict[int, str] = {}
    for chain in (info or {}).get("chains") or []:
        if isinstance(chain, Mapping):
            chain_id, url = chain.get("chain_id"), chain.get("rpc_url")
            if isinstance(chain_id, int) and isinstance(url, str):
                urls[chain_id] = url
    return urls


def detect_simulator(base_url: str) -> dict[str, Any] | None:
    """``/_sim/info`` data when the target is an rfqsim simulator, else None."""
    try:
        resp = request("GET", f"{base_url}/_sim/info", timeout=_DETECT_TIMEOUT)
    except OSError as exc:
        raise TargetError(f"cannot reach {base_url}: {exc}") from exc
    body = resp.body if resp.is_json else None
    if resp.status != 200 or not isinstance(body, dict):
        return None
    data = body.get("data")
    if isinstance(data, dict) and data.get("simulator") == SIMULATOR_NAME:
        return data
    return None


class TargetManager:
    """Resolves the target once per process, lazily, and owns the simulator it started."""

    def __init__(
        self,
        *,
        base_url: str | None,
        rpc_urls: Mapping[int, str],
        rfqsim_bin: str | None,
        rootdir: Path,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        inputs: Inputs | None = None,
        no_control: bool = False,
        proxy_report: Path | None = None,
        serve_args: Sequence[str] = (),
    ) -> None:
        self.base_url = base_url.rstrip("/") if base_url else None
        self.rpc_overrides = dict(rpc_urls)
        self.rfqsim_bin = rfqsim_bin
        self.rootdir = rootdir
        self.start_timeout = start_timeout
        self.inputs = inputs or Inputs()
        self.no_control = no_control  # start `rfqsim serve --no-control-api`
        self.serve_args = list(serve_args)  # further `rfqsim serve` arguments (--instances 2)
        # With no_control: put `rfqsim proxy` in front of it, its report in this directory.
        self.proxy_report = proxy_report
        self.proxy: ProxyProcess | None = None
        self.current: Target | None = None
        self.process: SimulatorProcess | None = None
        self._error: str | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None  # foreign mode's files

    def get(self) -> Target:
        """The target, starting the simulator on first use; raises TargetError (cached)."""
        if self.current is not None:
            return self.current
        if self._error is not None:
            raise TargetError(self._error)
        try:
            self.current = self._attach() if self.base_url else self._start()
        except Exception as exc:
            self._error = f"{type(exc).__name__}: {exc}"
            raise TargetError(self._error) from exc
        return self.current

    def _attach(self) -> Target:
        assert self.base_url is not None
        info = detect_simulator(self.base_url)
        return Target(
            base_url=self.base_url,
            is_simulator=info is not None,
            info=info,
            rpc_urls={**_rpc_urls_from_info(info), **self._given_rpc_urls()},
            inputs=self.inputs,
        )

    def _given_rpc_urls(self) -> dict[int, str]:
        given = {c: g.rpc_url for c, g in self.inputs.chains.items() if g.rpc_url}
        return {**given, **self.rpc_overrides}

    def _start(self) -> Target:
        executable = find_rfqsim_bin(self.rfqsim_bin, self.rootdir)
        proxied = self.no_control and self.proxy_report is not None
        self.process = SimulatorProcess(
            executable,
            start_timeout=self.start_timeout,
            cwd=self.rootdir,
            extra_args=[*(["--no-control-api"] if self.no_control else []), *self.serve_args],
            # Behind the proxy, a client's address is the first X-Forwarded-For entry.
            env={"RFQSIM_TRUSTED_PROXY": "true"} if proxied else None,
        )
        info = self.process.start()
        if self.no_control:
            base_url = str(info["api_url"]).rstrip("/")
            if self.proxy_report is not None:
                self.proxy = ProxyProcess(executable, base_url, self.proxy_report)
                base_url = self.proxy.start().rstrip("/")
            # A foreign deployment: only what its operator would hand a QA team, and a
            # "public" webhook URL on loopback in place of the QA team's tunnel.
            self._scratch = tempfile.TemporaryDirectory(prefix="rfqsim-conformance-hooks-")
            webhook = loopback_public_webhook(
                local_state_dir(None, self.rootdir), Path(self._scratch.name)
            )
            inputs = combine(combine(webhook, inputs_of(info)), self.inputs)
            manager_rpc = {c: g.rpc_url for c, g in inputs.chains.items() if g.rpc_url}
            return Target(
                base_url=base_url,
                is_simulator=False,
                info=None,
                rpc_urls={**manager_rpc, **self.rpc_overrides},
                started_by_harness=True,
                inputs=inputs,
            )
        return Target(
            base_url=str(info["api_url"]).rstrip("/"),
            is_simulator=info.get("simulator") == SIMULATOR_NAME,
            info=info,
            rpc_urls={**_rpc_urls_from_info(info), **self.rpc_overrides},
            started_by_harness=True,
            inputs=self.inputs,
        )

    def stop_proxy(self) -> dict[str, Any] | None:
        """Stop the proxy in front of the target (it writes its report then) and return the
        report; None without a proxy."""
        proxy, self.proxy = self.proxy, None
        if proxy is None:
            return None
        proxy.stop()
        return proxy.report()

    def stop(self) -> None:
        self.stop_proxy()
        process, self.process = self.process, None
        if process is not None:
            process.stop()
        scratch, self._scratch = self._scratch, None
        if scratch is not None:
            scratch.cleanup()
