"""Ready means ready (docs/decisions.md T9), as an integrator's CI meets it: it starts
`rfqsim serve`, waits for the ready file and trades at once. From the first request on, every
BOOK corridor has the fleet's resting offers in both directions and an instant swap there is
fillable, every RFQ direction is priced from makers' levels and a firm request is quoted, and
every maker of the fleet is online. A reset returns only once the same is true again; a fleet
without book roles is ready with its levels and an empty book."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.integration.serve_process import serve

pytestmark = pytest.mark.integration

Json = dict[str, Any]


class Api:
    """The demo keys that trade, one per environment."""

    def __init__(self, info: Json) -> None:
        self.url = str(info["api_url"])
        self.keys = {
            k["environment"]: k["key"] for k in info["demo_keys"] if "trades:write" in k["scopes"]
        }

    def call(self, method: str, path: str, *, environment: str = "live", body: Any = None) -> Json:
        """The answer's `data`, failing the test unless it is a 2xx."""
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {self.keys[environment]}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer: Json = json.loads(response.read())
        except urllib.error.HTTPError as error:
            with error:
                raise AssertionError(f"{method} {path}: {error.code} {error.read()!r}") from None
        return dict(answer["data"])

    def offers(self, chain: Json, sold: Json, bought: Json) -> list[Json]:
        """GET /v1/order-book for a taker selling `sold` for `bought`."""
        query = (
            f"chainId={chain['chain_id']}&sellToken={sold['address']}&buyToken={bought['address']}"
        )
        book = self.call("GET", f"/v1/order-book?{query}", environment=chain["environment"])
        return list(book["offers"])

    def preview(self, chain: Json, sold: Json, bought: Json, **extra: Any) -> Json:
        """POST /v2/rfq/preview (or, with a taker, /v2/rfq/request) for one whole token."""
        body = {
            "chainId": chain["chain_id"],
            "sellToken": sold["address"],
            "buyToken": bought["address"],
            "sellAmount": str(10 ** sold["decimals"]),  # above every chain's minimum
            **extra,
        }
        path = "/v2/rfq/request" if "taker" in extra else "/v2/rfq/preview"
        return self.call("POST", path, environment=chain["environment"], body=body)


def directions(info: Json, mode: str) -> list[tuple[Json, Json, Json]]:
    """(chain, sold token, bought token) for both directions of every `mode` corridor."""
    out = []
    for chain in info["chains"]:
        tokens = {t["address"]: t for t in chain["tokens"]}
        for corridor in chain["corridors"]:
            if corridor["mode"] == mode:
                base, quote = tokens[corridor["base"]], tokens[corridor["quote"]]
                out += [(chain, base, quote), (chain, quote, base)]
    return out


def assert_the_venue_trades(api: Api, info: Json) -> None:
    taker = info["demo_wallets"][0]["address"]
    book = directions(info, "BOOK")
    assert book, "the default venue has a BOOK corridor on every chain"
    for chain, sold, bought in book:
        offers = api.offers(chain, sold, bought)
        assert offers, f"no offer for {sold['symbol']} -> {bought['symbol']} on {chain['chain_id']}"
        # The instant swap an integrator's CI builds first: the book's whole offers fill it.
        swap = api.call(
            "POST",
            "/v1/swaps",
            environment=chain["environment"],
            body={
                "chainId": chain["chain_id"],
                "sellToken": sold["address"],
                "buyToken": bought["address"],
                "sellAmount": str(sum(int(o["sellAmount"]) for o in offers)),
                "taker": taker,
            },
        )
        assert swap["status"] == "QUOTED", swap
        assert len(swap["orders"]) == len(offers), swap
    quoted: set[int] = set()
    for chain, sold, bought in directions(info, "RFQ"):
        preview = api.preview(chain, sold, bought)
        assert preview["status"] == "preview", (sold["symbol"], bought["symbol"], preview)
        if chain["chain_id"] not in quoted:  # one firm quote per chain (outstanding slots)
            firm = api.preview(chain, sold, bought, taker=taker)
            assert firm["status"] == "quoted", firm
            quoted.add(chain["chain_id"])
    makers = api.call("GET", "/_sim/makers")
    fleet = makers["fleet"]
    assert {m["name"] for m in fleet} == {"alpha", "bravo", "charlie", "delta"}
    assert all(m["connected"] for m in fleet), fleet
    # Each maker on the stream of each environment, with levels there.
    environments = {c["environment"] for c in info["chains"]}
    online = {
        (s["wallet"].lower(), s["environment"]) for s in makers["online"] if s["pairs_with_levels"]
    }
    assert online == {(m["wallet"].lower(), env) for m in fleet for env in environments}


@pytest.mark.parametrize("makers_process", ["own", "in"])
def test_right_after_the_ready_file_the_venue_trades(tmp_path: Path, makers_process: str) -> None:
    with serve(tmp_path, "--makers-process", makers_process) as served:
        api = Api(served.info)
        assert_the_venue_trades(api, served.info)
        # Past the fleet's resting orders' deadlines, keeping that clock through a reset: the
        # baseline's orders come back expired, so the restarted fleet must rest new ones
        # before the reset returns.
        api.call("POST", "/_sim/clock/advance", body={"seconds": 3600})
        api.call("POST", "/_sim/reset", body={"keep": ["clock"]})
        assert_the_venue_trades(api, served.info)


def test_a_fleet_without_book_roles_is_ready_with_its_levels_and_an_empty_book(
    tmp_path: Path,
) -> None:
    solo = {"makers": [{"name": "solo", "wallet_index": 0, "chains": [56]}]}
    env = {**os.environ, "RFQSIM_MAKERS": json.dumps(solo)}
    with serve(tmp_path, "--makers-process", "in", env=env) as served:
        api = Api(served.info)
        for chain, sold, bought in directions(served.info, "RFQ"):
            if chain["chain_id"] == 56:
                assert api.preview(chain, sold, bought)["status"] == "preview"
        fleet = api.call("GET", "/_sim/makers")["fleet"]
        assert [(m["name"], m["connected"]) for m in fleet] == [("solo", True)]
        for chain, sold, bought in directions(served.info, "BOOK"):
            assert api.offers(chain, sold, bought) == []
