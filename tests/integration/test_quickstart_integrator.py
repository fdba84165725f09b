"""docs/quickstart-integrator.md runs as written: every snippet is copied out of the document
and executed as the page says (shell snippets with bash, Python with the repository's
.venv/bin/python, JavaScript with node beside the repository's node_modules) against a real
`rfqsim serve` (seed 0, free ports): the curl firm quote, the keyless taker flow in Python and in
viem (proof, quote, approve, swap, poll until filled), the v1 swap in curl and Python (create,
approve, swap, poll until FILLED), and the webhook handler's standard t=...,v1=... verifier
receiving a real rfq.filled through `rfqsim webhooks listen --forward-to` after
`rfqsim trigger rfq.filled`. Then again, unchanged, after `rfqsim trigger` of rfq.expired,
rfq.failed and rfq.filled.late (which move only their own RFQ's time), and once more after
`POST /_sim/clock/advance` (the snippets sign proofs with this machine's clock; docs/decisions.md
TT4). The document's literal values (demo key, wallets, token addresses) must be what seed 0
gives, so it cannot rot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.quickstart_snippets import (
    DOC,
    V1_SELL_AMOUNT,
    book_offers,
    enough_for_the_snippets,
    run,
    run_every_snippet,
    snippets,
    wait_for_book_offers,
)
from tests.integration.rfq_world import Api
from tests.integration.serve_process import RFQSIM, serve

pytestmark = pytest.mark.integration


def test_every_snippet_of_the_integrator_quickstart_runs(tmp_path: Path) -> None:
    code = snippets()
    text = DOC.read_text(encoding="utf-8")
    with serve(tmp_path, "--seed", "0") as served:
        api = Api(served.api_url, served.info)
        info = served.info
        key = api.demo_key()
        # The document's literals are what `just serve` prints under seed 0.
        for literal in (
            key,
            api.token("USDC"),
            api.token("USDT"),
            api.token("NGNS"),
            *(wallet["address"] for wallet in info["demo_wallets"]),
            *(wallet["private_key"] for wallet in info["demo_wallets"]),
        ):
            assert literal in text, literal
        for name in ("v1-swap-curl", "v1-swap-python"):
            assert f'"sellAmount": "{V1_SELL_AMOUNT}"' in code[name], name
        env = {**os.environ, "API": api.url, "RPC": api.chain_info["rpc_url"], "KEY": key}
        book_reader = api.data(
            "POST",
            "/_sim/keys",
            {"partner": "quickstart-test", "environment": "test", "scopes": ["quotes:read"]},
        )["key"]

        # Ready means ready: the fleet's resting orders are there from the start.
        offers = book_offers(api, book_reader)
        assert enough_for_the_snippets(offers), offers
        run_every_snippet(code, env, tmp_path / "first")

        # The README's triggers, then every snippet again, unchanged: the triggers moved only
        # their own RFQs' time (the clock did not move, no live quote of ours lapsed).
        for event in ("rfq.expired", "rfq.failed", "rfq.filled.late"):
            run([str(RFQSIM), "trigger", event, "--url", api.url, "--api-key", key], env)
        assert api.data("GET", "/_sim/clock")["offset_seconds"] == 0
        wait_for_book_offers(api, book_reader)
        run_every_snippet(code, env, tmp_path / "after-triggers")

        # The clock moved (5 minutes ahead of this machine): the snippets, which sign their
        # proofs with this machine's clock, still run.
        moved = api.data("POST", "/_sim/clock/advance", {"seconds": 300})
        assert moved["offset_seconds"] >= 300
        wait_for_book_offers(api, book_reader)
        run_every_snippet(code, env, tmp_path / "clock-moved")
