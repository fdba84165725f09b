"""The QA team's inputs as the pytest plugin reads them (flags, environment variables, the
config file) and the check of a test's ``needs`` against them and the target."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from conformance.deployment.target import Target
from conformance.wire.client import is_loopback_url
from conformance.wire.inputs import Inputs, combine, merge, read_config
from conformance.wire.needs import KEY_SCOPES, control_skip_message, unmet
from conformance.wire.public_receiver import local_state_dir, loopback_public_webhook


def given_inputs(config: pytest.Config, rpc_urls: Mapping[int, str]) -> Inputs:
    """``--conformance-config`` overlaid with the flags (and their environment variables)."""
    path = config.getoption("--conformance-config")
    base = read_config(path) if path else Inputs()
    keys = list(config.getoption("--api-key")) or _env_list("RFQSIM_API_KEY")
    wallets = list(config.getoption("--taker-key")) or _env_list("RFQSIM_TAKER_KEY")
    maker_keys = list(config.getoption("--maker-key")) or _env_list("RFQSIM_MAKER_KEY")
    webhook = config.getoption("--webhook-public-url") or os.environ.get(
        "RFQSIM_WEBHOOK_PUBLIC_URL"
    )
    spendable = list(config.getoption("--spendable-key")) or _env_list("RFQSIM_SPENDABLE_KEY")
    given = merge(
        base,
        keys=keys,
        spendable_keys=spendable,
        wallets=wallets,
        webhook=webhook,
        rpc_urls=rpc_urls,
        webhook_listen=config.getoption("--webhook-listen"),
        webhook_tls=(config.getoption("--webhook-tls-cert"), config.getoption("--webhook-tls-key")),
        maker_keys=maker_keys,
    )
    local = config.getoption("--webhook-local")
    if local is None:
        return given
    if given.webhook_public_url:
        raise ValueError("--webhook-local and --webhook-public-url: give one of them")
    base_url = config.getoption("--base-url")
    if not base_url or not is_loopback_url(base_url):
        raise ValueError(
            "--webhook-local receives the webhooks of `rfqsim serve` on this machine: "
            "it needs a loopback --base-url (http://127.0.0.1:PORT)"
        )
    scratch = Path(tempfile.mkdtemp(prefix="rfqsim-conformance-hooks-"))
    config.add_cleanup(lambda: shutil.rmtree(scratch, ignore_errors=True))
    state_dir = local_state_dir(local or None, Path.cwd())
    return combine(loopback_public_webhook(state_dir, scratch), given)


def _env_list(name: str) -> list[str]:
    return [v for v in os.environ.get(name, "").split() if v]


def resolved_inputs(target: Target) -> Inputs:
    """The target's inputs with the scopes of undeclared keys probed (once per session)."""
    return target.resolved_inputs()


def unmet_need(config: pytest.Config, target: Target, need: str) -> str | None:
    """The skip message when the target and the inputs cannot meet ``need``, else None."""
    if need == "sim_control":
        return None if target.controllable else control_skip_message(target.base_url, None)
    inputs = resolved_inputs(target) if need in KEY_SCOPES else target.inputs
    keys = {
        name: inputs.key(scopes, environment) is not None
        for name, (scopes, environment) in KEY_SCOPES.items()
    }
    test_chains = [c for c in target.rpc_urls if inputs.environment(c) == "test"]
    return unmet(
        need,
        controllable=target.controllable,
        keys=keys,
        taker_wallet=bool(inputs.taker_wallets),
        webhook_url=bool(inputs.webhook_public_url),
        rpc=bool(test_chains),
        spendable_key=inputs.spendable_key() is not None,
        max_wait=config.getoption("--max-wait"),
        loopback=is_loopback_url(target.base_url),
        maker_key=inputs.maker_key("test") is not None,
    )
