"""`rfqsim serve --state-dir DIR`: a stop and a start carry on with the same RFQs, transfers,
keys, webhooks, rates-feed trades and balances (real processes, real Anvil); a state directory
that is not ours, corrupt or from another version is refused at start with one line naming the
file."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.calls.feed import fill_logs, get_trades, wait_trades
from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import Transfers
from conformance.calls.webhooks import fetch_certificate
from conformance.deployment.sim_control import SimControl
from conformance.wire.chain import Chain
from conformance.wire.client import Client
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import WebhookReceiver
from simulator import __version__
from simulator.adapters.sim.state_dir import FORMAT_VERSION
from tests.integration.serve_process import RFQSIM, serve, stop

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("state-dir")]

CHAIN = 97
STATE_FILE = "rfqsim-state.json"


def token(info: dict[str, Any], symbol: str) -> str:
    chain = next(c for c in info["chains"] if c["chain_id"] == CHAIN)
    return str(next(t for t in chain["tokens"] if t["symbol"] == symbol)["address"])


def ten_usdc(info: dict[str, Any], taker: str) -> dict[str, Any]:
    """A firm quote's request: 10 USDC for USDT."""
    return {
        "chainId": CHAIN,
        "sellToken": token(info, "USDC"),
        "buyToken": token(info, "USDT"),
        "sellAmount": "10000000",
        "taker": taker,
    }


def keyed(info: dict[str, Any]) -> Client:
    key = next(k["key"] for k in info["demo_keys"] if k["label"] == "taker-test")
    return Client(info["api_url"], headers={"Authorization": f"Bearer {key}"})


DEMO_TAKER = Wallet(
    "0x8f49B351160Eb48606dC0114761aaB526c18782D",  # demo wallet 0 under seed 0
    "0x09125d91f85b4de824dfcfb5689ea4cdfc11521f7bbf29c2a0201613ba01073d",
)


def test_a_stop_and_start_keeps_a_quote_a_transfer_and_the_webhooks(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    taker = DEMO_TAKER
    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as first:
        http = keyed(first.info)
        body = ten_usdc(first.info, taker.address)
        quoted = http.post("/v2/rfq/request", json=body)
        assert quoted.status == 200, quoted.raw
        firm = quoted.json()["data"]
        assert firm["status"] == "quoted"
        hook = http.post(
            "/v1/webhooks",
            json={"url": "https://hooks.example.test/x", "eventTypes": ["rfq.filled"]},
        )
        assert hook.status == 201, hook.raw
        ramp = Ramp(Client(first.api_url), SimControl(Client(first.api_url)))
        wallet = fresh_wallet()
        ramp.registered(wallet)
        transfers = Transfers(ramp)
        created = transfers.create(transfers.body(wallet, "sell", "500"))
        chain = Chain(
            next(c["rpc_url"] for c in first.info["chains"] if c["chain_id"] == CHAIN), CHAIN
        )
        # The approval is mined before the stop: the chain must remember it.
        approval = firm["transactions"]["approval"]
        chain.transact(taker, approval["to"], bytes.fromhex(approval["data"][2:]))
        usdt_before = chain.balance_of(token(first.info, "USDT"), taker.address)
        assert stop(first.process) == 0
    saved = json.loads((state_dir / STATE_FILE).read_text())
    assert saved["format"] == "rfqsim-state"

    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as second:
        http = keyed(second.info)
        record = http.get(f"/v2/rfq/{firm['rfqId']}")
        assert record.status == 200, record.raw
        assert record.json()["data"]["status"] == "quoted"
        listed = http.get("/v1/webhooks").json()["data"]
        assert [e["url"] for e in listed] == ["https://hooks.example.test/x"]
        ramp = Ramp(Client(second.api_url), SimControl(Client(second.api_url)))
        assert Transfers(ramp).read(created)["id"] == created.id
        chain = Chain(
            next(c["rpc_url"] for c in second.info["chains"] if c["chain_id"] == CHAIN), CHAIN
        )
        # The quote signed before the stop still executes, and the restarted indexer reconciles
        # it with the record the restart kept.
        swap = firm["transactions"]["swap"]
        chain.transact(taker, swap["to"], bytes.fromhex(swap["data"][2:]))
        filled = wait_filled(http, firm["rfqId"])
        assert chain.balance_of(token(second.info, "USDT"), taker.address) == usdt_before + int(
            filled["buyAmount"]
        )
        assert stop(second.process) == 0


def test_a_stop_and_start_keeps_the_finished_webhook_deliveries(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    taker = "0x8f49B351160Eb48606dC0114761aaB526c18782D"  # demo wallet 0 under seed 0
    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as first:
        http, sim = keyed(first.info), SimControl(Client(first.api_url))
        cert_pem, key_pem, _ = fetch_certificate(first.api_url)
        with WebhookReceiver(cert_pem, key_pem) as receiver:
            hook = http.post(
                "/v1/webhooks", json={"url": receiver.url, "eventTypes": ["rfq.expired"]}
            )
            assert hook.status == 201, hook.raw
            quoted = http.post("/v2/rfq/request", json=ten_usdc(first.info, taker))
            assert quoted.status == 200, quoted.raw
            rfq_id = quoted.json()["data"]["rfqId"]
            sim.advance(61)  # past expiresAt: rfq.expired goes to the receiver
            receiver.wait_for_requests(1, timeout=30)
            delivered = wait_delivered(sim, f"rfq.expired:{rfq_id}")
        assert stop(first.process) == 0

    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as second:
        sim = SimControl(Client(second.api_url))
        after = sim.call("GET", "webhooks/deliveries")
        assert isinstance(after, dict)
        assert after["deliveries"] == [delivered]
        assert stop(second.process) == 0


def test_a_stop_and_start_keeps_the_feeds_trades(tmp_path: Path) -> None:
    """A fill made before the stop is still a trade of /historical_trades after the start (the
    tape is in the history file), once, with the same figures, and /tickers counts it once."""
    state_dir = tmp_path / "state"
    taker = DEMO_TAKER
    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as first:
        http = keyed(first.info)
        quoted = http.post("/v2/rfq/request", json=ten_usdc(first.info, taker.address))
        assert quoted.status == 200, quoted.raw
        firm = quoted.json()["data"]
        chain = Chain(
            next(c["rpc_url"] for c in first.info["chains"] if c["chain_id"] == CHAIN), CHAIN
        )
        approval, swap = firm["transactions"]["approval"], firm["transactions"]["swap"]
        chain.transact(taker, approval["to"], bytes.fromhex(approval["data"][2:]))
        receipt = chain.transact(taker, swap["to"], bytes.fromhex(swap["data"][2:]))
        (fill,) = fill_logs(receipt, swap["to"])
        feed = Client(first.api_url)
        before = wait_trades(feed, "USDC_USDT", [fill.trade_id])[fill.trade_id]
        tickers = feed.get("/tickers", params={"ticker_id": "USDC_USDT"}).json()
        assert stop(first.process) == 0

    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as second:
        feed = Client(second.api_url)
        after = wait_trades(feed, "USDC_USDT", [fill.trade_id])[fill.trade_id]
        assert after == before
        page = get_trades(feed, "USDC_USDT", limit=1000)
        assert [t["trade_id"] for t in page["buy"] + page["sell"]] == [fill.trade_id]
        again = feed.get("/tickers", params={"ticker_id": "USDC_USDT"}).json()
        assert again[0]["base_volume"] == tickers[0]["base_volume"] == before["base_volume"]
        assert stop(second.process) == 0


def wait_delivered(sim: SimControl, event_id: str) -> dict[str, Any]:
    """The event's one delivery, once delivered and listed from the history file."""
    deadline = time.monotonic() + 30
    listed: Any = None
    while time.monotonic() < deadline:
        listed = sim.call("GET", f"webhooks/deliveries?event_id={event_id}")
        found = listed["deliveries"] if isinstance(listed, dict) else []
        if [d["status"] for d in found] == ["delivered"]:
            return dict(found[0])
        time.sleep(0.05)
    raise AssertionError(f"never delivered: {listed}")


def wait_filled(http: Client, rfq_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    record: dict[str, Any] = {}
    while time.monotonic() < deadline:
        record = http.get(f"/v2/rfq/{rfq_id}").json()["data"]
        if record["status"] == "filled":
            return record
        time.sleep(0.05)
    raise AssertionError(f"never filled: {record}")


def start_refused(state_dir: Path, *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [
            str(RFQSIM),
            "serve",
            "--port",
            "0",
            "--rpc-port",
            "0",
            "--state-dir",
            str(state_dir),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "not a readable rfqsim state file"),
        ('{"hello": "world"}', 'not an rfqsim state file (no "format": "rfqsim-state")'),
        (
            '{"format": "rfqsim-state", "format_version": 99, "simulator_version": "9.9.9"}',
            "written by rfqsim 9.9.9 (state format 99); this is rfqsim",
        ),
    ],
)
def test_a_foreign_or_corrupt_state_dir_is_refused_with_one_line(
    tmp_path: Path, content: str, said: str
) -> None:
    (tmp_path / STATE_FILE).write_text(content)
    code, stderr = start_refused(tmp_path)
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert str(tmp_path / STATE_FILE) in lines[0]
    assert said in lines[0]


def test_a_damaged_chain_file_is_refused_naming_it(tmp_path: Path) -> None:
    document = {
        "format": "rfqsim-state",
        "format_version": FORMAT_VERSION,
        "simulator_version": __version__,
        "seed": 0,
        "chains": [56, 97],
        "services": {},
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(document))
    (tmp_path / "chain-56.state").write_text("0x1f8b")
    (tmp_path / "chain-97.state").write_text("garbage")
    code, stderr = start_refused(tmp_path)
    assert code == 2
    assert stderr.strip() == (
        f"rfqsim: {tmp_path / 'chain-97.state'}: not an Anvil state export (expected 0x… hex)"
    )


def test_history_in_the_file_survives_a_restart_and_the_crash_of_the_process(
    tmp_path: Path,
) -> None:
    """An RFQ a day old lives in the state directory's history file, not in memory nor in the
    JSON written at stop; it is read after a restart, and even after a kill (no stop, so no
    JSON written at all), because the file is written as the history grows."""
    state_dir = tmp_path / "state"
    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as first:
        http = keyed(first.info)
        body = ten_usdc(first.info, first.info["demo_wallets"][0]["address"])
        firm = http.post("/v2/rfq/request", json=body).json()["data"]
        assert http.post(f"/v2/rfq/{firm['rfqId']}/cancel", json={}).status == 200
        control = SimControl(Client(first.api_url))
        control.advance(120)  # it expires
        deadline = time.monotonic() + 30
        while http.get(f"/v2/rfq/{firm['rfqId']}").json()["data"]["status"] != "expired":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        control.advance(24 * 3600 - 600)  # at rest for most of a day: out of memory
        deadline = time.monotonic() + 30
        while (store := Client(first.api_url).get("/_sim/runtime").json()["data"]["store"])[
            "rfqs_in_memory"
        ]:
            assert time.monotonic() < deadline, store
            time.sleep(0.05)
        assert stop(first.process) == 0
    services = json.loads((state_dir / STATE_FILE).read_text())["services"]
    assert firm["rfqId"] not in services["rfq.store"]["records"]  # in the history file only
    assert "rfq.archive" not in services
    assert (state_dir / "rfqsim-history.sqlite3").exists()

    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as second:
        record = keyed(second.info).get(f"/v2/rfq/{firm['rfqId']}")
        assert record.status == 200, record.raw
        assert record.json()["data"]["status"] == "expired"
        second.process.kill()  # a crash: nothing written at stop
        second.process.wait()
    (state_dir / STATE_FILE).unlink()  # and no JSON from any earlier stop either

    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as third:
        record = keyed(third.info).get(f"/v2/rfq/{firm['rfqId']}")
        assert record.status == 200, record.raw
        assert record.json()["data"]["status"] == "expired"
        assert stop(third.process) == 0


def written_configuration(state_dir: Path) -> dict[str, str]:
    """What the history file holds of the configuration (read as its owner could, any time)."""
    path = state_dir / "rfqsim-history.sqlite3"
    if not path.exists():
        return {}
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return dict(conn.execute("SELECT name, state FROM durable_state").fetchall())


def test_a_key_and_a_webhook_endpoint_made_after_start_survive_a_crash(tmp_path: Path) -> None:
    """Nothing is written at stop when the process is killed; a key and a webhook endpoint
    made since the start are in the history file within `state.durable_interval_s` of their
    creation, and the simulator started again on the directory knows both."""
    state_dir = tmp_path / "state"
    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as first:
        made = Client(first.api_url).post(
            "/_sim/keys",
            json={"partner": "crash-test", "environment": "test", "scopes": ["trades:read"]},
        )
        assert made.status == 201, made.raw
        key, key_id = made.json()["data"]["key"], made.json()["data"]["key_id"]
        hook = keyed(first.info).post(
            "/v1/webhooks",
            json={"url": "https://hooks.example.test/crash", "eventTypes": ["rfq.filled"]},
        )
        assert hook.status == 201, hook.raw
        deadline = time.monotonic() + 30
        while True:
            written = written_configuration(state_dir)
            if key_id in written.get("access.keys", "") and "crash" in written.get(
                "webhooks.registry", ""
            ):
                break
            assert time.monotonic() < deadline, written
            time.sleep(0.05)
        first.process.kill()  # a crash: nothing written at stop
        first.process.wait()
    assert not (state_dir / STATE_FILE).exists()  # no stop ever wrote the JSON

    with serve(tmp_path, "--state-dir", str(state_dir), "--seed", "0") as second:
        own = Client(second.api_url, headers={"Authorization": f"Bearer {key}"})
        unknown = own.get("/v2/rfq/rfq_0000000000000000000000000")
        assert unknown.status == 404, unknown.raw  # authenticated: the key is known
        listed = keyed(second.info).get("/v1/webhooks").json()["data"]
        assert [e["url"] for e in listed] == ["https://hooks.example.test/crash"]
        assert stop(second.process) == 0


def test_a_history_file_of_another_format_is_refused_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "rfqsim-history.sqlite3").write_bytes(b"this is no database " * 100)
    code, stderr = start_refused(tmp_path)
    assert code == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "rfqsim-history.sqlite3: not a readable rfqsim history file" in lines[0]
