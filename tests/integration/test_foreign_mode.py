"""`rfqsim serve --no-control-api` (a "foreign deployment" for the conformance suite) and the
mutation proxy in front of it: real process, real Anvil, real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conformance.mutants.catalogue import all_mutations
from conformance.mutants.proxy import running_proxy
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error
from rfqkit.json_rpc import hex_to_int, rpc
from tests.integration.serve_process import Served, serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("foreign-mode")]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One foreign deployment for the module: both tests only read from it (a few keyless
    calls each, far below the 60 a minute), so a second start-up would only cost time."""
    with serve(tmp_path_factory.mktemp("foreign"), "--no-control-api", "--no-makers") as running:
        yield running


def test_without_the_control_api_sim_is_404_and_the_ready_file_holds_only_operator_inputs(
    served: Served,
) -> None:
    info = served.info
    assert set(info) == {
        "api_url",
        "control_api",
        "chains",
        "api_keys",
        "taker_wallets",
        "maker_keys",
    }
    assert info["control_api"] is False
    client = Client(served.api_url)
    for path in (
        "/_sim/info",
        "/_sim/clock",
        "/_sim/",
        "/_sim/openapi.json",
        "/_sim/console",
        "/_sim/console/main.js",
        "/_sim/stream",
        "/_sim/rfqs",
    ):
        assert_error(client.get(path), 404, "not_found")
    # A browser opening the root is not sent to a console that does not exist.
    root = client.get("/", headers={"Accept": "text/html"})
    assert root.status == 200, root.raw
    assert_error(client.post("/_sim/clock/advance", json={"seconds": 60}), 404, "not_found")
    assert assert_data(client.get("/v2/health"))["status"] == "ok"
    for chain in info["chains"]:
        assert set(chain) == {"chain_id", "environment", "rpc_url"}
        assert hex_to_int(rpc(chain["rpc_url"], "eth_chainId", [])) == chain["chain_id"]
    scopes = {scope for key in info["api_keys"] for scope in key["scopes"]}
    assert {"trades:write", "trades:read", "webhooks:manage", "rfq:aggregator"} <= scopes
    assert info["taker_wallets"]
    assert all(len(k) == 66 for k in info["taker_wallets"])
    # Every key of the ready file authenticates (404 for an RFQ it does not own, not 401);
    # exact-scope keys of the demo partner and a key of a second partner are among them.
    for key in info["api_keys"]:
        keyed = client.with_headers({"Authorization": f"Bearer {key['key']}"})
        expected = 404 if "trades:read" in key["scopes"] else 403
        assert keyed.get("/v2/rfq/rfq_doesnotexist").status == expected, key["scopes"]
    assert {k["partner"] for k in info["api_keys"]} == {"demo", "demo-other"}
    demo_scopes = [k["scopes"] for k in info["api_keys"] if k["partner"] == "demo"]
    for scope in ("trades:write", "trades:read", "webhooks:manage"):
        assert [scope] in demo_scopes
    # One key the limiter's test alone may run out, marked so.
    [spendable] = [k for k in info["api_keys"] if k.get("spendable")]
    assert (spendable["environment"], spendable["scopes"]) == ("test", ["quotes:read"])
    # The maker credential it hands over is one: taker paths answer it 403 (not 401).
    [maker] = info["maker_keys"]
    assert (maker["environment"], maker["scopes"]) == ("test", ["maker:stream"])
    as_maker = client.with_headers({"Authorization": f"Bearer {maker['key']}"})
    assert_error(as_maker.get("/v2/rfq/rfq_doesnotexist"), 403, "forbidden")


def test_the_proxy_relays_unchanged_and_each_mutation_breaks_only_what_it_names(
    served: Served,
) -> None:
    mutations = {m.name: m for m in all_mutations()}
    assert len(mutations) >= 36
    with running_proxy(served.api_url, None) as proxy:
        direct = Client(served.api_url).get("/v2/health")
        relayed = Client(proxy.url).get("/v2/health")
        assert relayed.status == direct.status == 200
        assert relayed.request_id
        assert relayed.request_id != direct.request_id
        assert json.loads(relayed.raw)["data"]["status"] == "ok"
        assert_error(Client(proxy.url).get("/v2/nothing"), 404, "not_found")
    with running_proxy(served.api_url, mutations["drop_request_id"]) as proxy:
        assert Client(proxy.url).get("/v2/health").request_id is None
    with running_proxy(served.api_url, mutations["error_text_plain"]) as proxy:
        health = Client(proxy.url).get("/v2/health")
        assert health.headers["Content-Type"].startswith("application/json")
        missing = Client(proxy.url).get("/v2/nothing")
        assert missing.status == 404
        assert missing.headers["Content-Type"].startswith("text/plain")
