"""The QA team's inputs, the needs check, client pacing, address normalization and the
mutations' rewrites: pure logic, no server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from eth_account import Account
from multidict import CIMultiDict

from conformance.deployment.preflight import webhook_local_check
from conformance.mutants.catalogue import all_mutations
from conformance.mutants.mutations import Exchange
from conformance.report.markdown import render_skipped
from conformance.wire.client import Headers, Pacing, Response, checksummed
from conformance.wire.inputs import GivenKey, InputError, combine, merge, parse_key, read_config
from conformance.wire.needs import HOW, MISSING_INPUT, needs_in, skip_kind, skip_message, unmet
from conformance.wire.public_receiver import CA_FILE

WALLET = "0x" + "11" * 32


def test_config_file_and_flags_combine(tmp_path: Path) -> None:
    config = tmp_path / "staging.yaml"
    config.write_text(
        "base_url: https://staging.example/\n"
        "chains:\n  - {chain_id: 97, rpc_url: https://rpc.example/97, environment: test}\n"
        "api_keys:\n  - {key: tx_test_aaaaaaaaaaaa.s1, scopes: [trades:write, trades:read]}\n"
        "  - tx_live_bbbbbbbbbbbb.s2\n"
        f"taker_wallets: [{WALLET}]\n"
    )
    inputs = merge(
        read_config(config),
        keys=["tx_test_cccccccccccc.s3=webhooks:manage"],
        wallets=[],
        webhook="https://hooks.example/qa",
        rpc_urls={56: "https://rpc.example/56"},
    )
    assert inputs.base_url == "https://staging.example"
    assert inputs.environment(97) == "test"
    assert inputs.environment(56) == "live"  # the spec's chain, not in the file
    assert inputs.chains[56].rpc_url == "https://rpc.example/56"
    assert inputs.taker_wallets[0].address == Account.from_key(WALLET).address
    assert inputs.webhook_public_url == "https://hooks.example/qa"
    trades = inputs.key({"trades:write"}, "test")
    assert trades is not None
    assert trades.public == "tx_test_aaaaaaaaaaaa"
    assert inputs.key({"webhooks:manage"}, "test") == GivenKey(
        "tx_test_cccccccccccc.s3", frozenset({"webhooks:manage"})
    )
    assert inputs.key({"trades:write"}, "live") is None  # the live key's scopes are unknown
    both = combine(inputs, merge(inputs, keys=[], wallets=[], webhook=None, rpc_urls={}))
    assert len(both.keys) == 2 * len(inputs.keys)


def test_a_key_of_the_config_file_may_name_its_partner(tmp_path: Path) -> None:
    config = tmp_path / "partners.yaml"
    config.write_text(
        "api_keys:\n"
        "  - {key: tx_test_aaaaaaaaaaaa.s1, scopes: [trades:read], partner: acme}\n"
        "  - {key: tx_test_bbbbbbbbbbbb.s2, partner: globex}\n"
        "  - {key: tx_test_cccccccccccc.s3, scopes: [trades:read]}\n"
    )
    inputs = read_config(config)
    assert [k.partner for k in inputs.keys] == ["acme", "globex", None]
    assert inputs.keys[1].scopes is None  # still probed
    merged = merge(inputs, keys=["tx_test_dddddddddddd.s4"], wallets=[], webhook=None, rpc_urls={})
    assert merged.keys[:3] == inputs.keys  # the file's labels survive the flags


def test_where_the_webhook_receiver_listens_comes_from_the_file_and_the_flags_win(
    tmp_path: Path,
) -> None:
    config = tmp_path / "hooks.yaml"
    config.write_text(
        "webhook_public_url: https://hooks.example/qa\n"
        "webhook_listen: 127.0.0.1:9100\n"
        "webhook_tls_cert: /etc/qa/cert.pem\n"
        "webhook_tls_key: /etc/qa/key.pem\n"
    )
    from_file = read_config(config)
    assert (from_file.webhook_listen, from_file.webhook_tls_cert, from_file.webhook_tls_key) == (
        "127.0.0.1:9100",
        "/etc/qa/cert.pem",
        "/etc/qa/key.pem",
    )
    flagged = merge(
        from_file,
        keys=[],
        wallets=[],
        webhook=None,
        rpc_urls={},
        webhook_listen="0.0.0.0:9200",
        webhook_tls=("/tmp/c.pem", None),
    )
    assert flagged.webhook_public_url == "https://hooks.example/qa"
    assert flagged.webhook_listen == "0.0.0.0:9200"
    assert (flagged.webhook_tls_cert, flagged.webhook_tls_key) == ("/tmp/c.pem", "/etc/qa/key.pem")
    assert combine(flagged, read_config(config)).webhook_listen == "127.0.0.1:9100"


def test_maker_credentials_come_from_the_file_and_the_flag(tmp_path: Path) -> None:
    config = tmp_path / "makers.yaml"
    config.write_text(
        "maker_keys:\n  - {key: tx_test_dddddddddddd.m1, scopes: [maker:stream]}\n"
        "  - tx_live_eeeeeeeeeeee.m2\n"
    )
    inputs = merge(
        read_config(config),
        keys=[],
        wallets=[],
        webhook=None,
        rpc_urls={},
        maker_keys=["tx_test_ffffffffffff.m3"],
    )
    assert [k.public for k in inputs.maker_keys] == [
        "tx_test_dddddddddddd",
        "tx_live_eeeeeeeeeeee",
        "tx_test_ffffffffffff",
    ]
    maker = inputs.maker_key("test")
    assert maker is not None
    assert maker.key == "tx_test_dddddddddddd.m1"
    assert inputs.key(set(), "test") is None  # a maker credential is no taker key
    assert len(combine(inputs, inputs).maker_keys) == 6
    with pytest.raises(InputError, match="--maker-key"):
        merge(read_config(config), keys=[], wallets=[], webhook=None, rpc_urls={}, maker_keys=["="])


def test_without_a_maker_credential_the_skip_names_the_flag() -> None:
    met = {"keys": {}, "taker_wallet": True, "webhook_url": False, "rpc": True, "max_wait": None}
    missing = unmet("key:maker", controllable=False, **met)  # type: ignore[arg-type]
    assert missing is not None
    assert missing.startswith("needs key:maker: --maker-key KEY")
    assert skip_kind(missing, None) == MISSING_INPUT
    assert unmet("key:maker", controllable=False, maker_key=True, **met) is None  # type: ignore[arg-type]
    assert unmet("key:maker", controllable=True, **met) is None  # type: ignore[arg-type]


def test_bad_inputs_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="KEY"):
        parse_key("=trades:write")
    bad = tmp_path / "bad.yaml"
    bad.write_text("taker_wallets: [nothex]\n")
    with pytest.raises(InputError, match="private key"):
        read_config(bad)


def test_a_spendable_key_is_kept_out_of_every_other_tests_reach(tmp_path: Path) -> None:
    config = tmp_path / "limits.yaml"
    config.write_text(
        "api_keys:\n"
        "  - {key: tx_test_aaaaaaaaaaaa.s1, scopes: [quotes:read], spendable: true}\n"
        "  - {key: tx_test_bbbbbbbbbbbb.s2, scopes: [quotes:read, trades:read]}\n"
    )
    inputs = merge(
        read_config(config),
        keys=[],
        wallets=[],
        webhook=None,
        rpc_urls={},
        spendable_keys=["tx_test_cccccccccccc.s3=quotes:read"],
    )
    assert [k.public for k in inputs.shared_keys] == ["tx_test_bbbbbbbbbbbb"]
    chosen = inputs.key({"quotes:read"}, "test")
    assert chosen is not None
    assert chosen.public == "tx_test_bbbbbbbbbbbb", "a shared test never gets the spendable key"
    spendable = inputs.spendable_key()
    assert spendable is not None
    assert spendable.public == "tx_test_aaaaaaaaaaaa"
    assert [k.public for k in inputs.keys if k.spendable] == [
        "tx_test_aaaaaaaaaaaa",
        "tx_test_cccccccccccc",
    ]
    assert inputs.spendable_key("live") is None
    common = {"controllable": False, "keys": {}, "taker_wallet": False, "webhook_url": False}
    assert unmet("spendable_key", **common, rpc=True, max_wait=None, spendable_key=True) is None  # type: ignore[arg-type]
    missing = unmet("spendable_key", **common, rpc=True, max_wait=None)  # type: ignore[arg-type]
    assert missing is not None
    assert missing.startswith("needs spendable_key: --spendable-key KEY")
    bad = tmp_path / "bad.yaml"
    bad.write_text("api_keys:\n  - {key: tx_test_dddddddddddd.secret9, spendable: maybe}\n")
    with pytest.raises(InputError, match="spendable") as refused:
        read_config(bad)
    assert "secret9" not in str(refused.value), "the secret is never echoed"


def test_needs_name_the_missing_input_and_the_report_groups_by_it() -> None:
    met = {"keys": {"key:trades": True}, "taker_wallet": False, "webhook_url": False}
    common = {"controllable": False, "rpc": True, "max_wait": 30.0}
    assert unmet("key:trades", **met, **common) is None  # type: ignore[arg-type]
    wallet = unmet("taker_wallet", **met, **common)  # type: ignore[arg-type]
    assert wallet is not None
    assert wallet.startswith("needs taker_wallet: --taker-key")
    assert unmet("time<=65s", **met, **common) is not None  # type: ignore[arg-type]
    assert unmet("sim_control", **{**met, **common, "controllable": True}) is None  # type: ignore[arg-type]
    assert unmet("loopback", **met, **common, loopback=False) is not None  # type: ignore[arg-type]
    assert unmet("loopback", **met, **common, loopback=True) is None  # type: ignore[arg-type]
    rules = [
        {
            "id": "a/b",
            "status": "skipped",
            "skip_kind": "missing_input",
            "needs": ["taker_wallet"],
            "tests": [{"nodeid": "t.py::x", "outcome": "skipped", "reason": wallet}],
        },
        {"id": "a/c", "status": "passed", "tests": [{"reason": ""}]},
    ]
    assert needs_in([wallet]) == ["taker_wallet"]
    text = "\n".join(render_skipped(rules))
    assert "| `taker_wallet` |" in text
    assert "`a/b`" in text
    assert "a/c" not in text


def _response(status: int, **headers: str) -> Response:
    return Response("GET", "http://x", status, Headers(headers.items()), b"", None, False, 0.0)


def test_pacing_waits_what_the_service_names() -> None:
    pacing = Pacing(cap_wait_s=5.0)
    assert pacing.note(_response(200, **{"X-RateLimit-Remaining": "3"})) is None
    assert pacing.note(_response(429, **{"Retry-After": "7"})) == 7.0
    assert pacing.note(_response(429, **{"X-RateLimit-Reset": "4"})) == 4.0
    assert pacing.note(_response(429)) == 5.0  # the outstanding cap's 429 names no wait
    pacing.note(_response(200, **{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"}))
    assert pacing.not_before > time.monotonic() + 29


def test_lowercase_addresses_are_checksummed_and_mixed_case_kept() -> None:
    address = Account.create().address
    body = {"a": address.lower(), "b": [address], "c": "0x" + "ab" * 32, "d": address.swapcase()}
    out = checksummed(body)
    assert out["a"] == address
    assert out["b"] == [address]
    assert out["c"] == body["c"]  # a hash is no address
    assert out["d"] == body["d"]  # a wrong checksum stays wrong


def _exchange(path: str, status: int, body: object, method: str = "GET") -> Exchange:
    return Exchange(
        method=method,
        path=path,
        query={},
        request_headers=CIMultiDict(),
        request_body=b"",
        status=status,
        headers=CIMultiDict({"X-Request-Id": "req_1", "Content-Type": "application/json"}),
        body=json.dumps(body).encode(),
    )


def test_each_mutation_changes_only_what_it_names() -> None:
    mutations = {m.name: m for m in all_mutations()}
    assert sum(1 for m in mutations.values() if not m.equivalent) >= 36
    health = _exchange(
        "/v2/health", 200, {"data": {"status": "ok", "time": "2026-01-01T00:00:00Z"}}
    )
    drop = mutations["drop_request_id"]
    assert drop.applies(health)
    drop.apply(health)
    assert "X-Request-Id" not in health.headers
    missing = _exchange("/v2/rfq/rfq_x", 404, {"error": {"code": "not_found"}})
    claim = mutations["claim_wrong_token_403"]
    assert claim.applies(missing)
    claim.apply(missing)
    assert (missing.status, missing.error_code()) == (403, "forbidden")
    backwards = mutations["ramp_status_backwards"]
    reads = []
    for status in ("AWAITING_FUNDS", "PROCESSING", "PROCESSING"):
        read = _exchange("/v2/ramp/transfers/t1", 200, {"transfer": {"id": "t1", "status": status}})
        assert backwards.applies(read)
        backwards.apply(read)
        reads.append(read.json()["transfer"]["status"])
    assert reads == ["AWAITING_FUNDS", "PROCESSING", "AWAITING_FUNDS"]
    assert not mutations["drop_request_id"].equivalent
    assert mutations["addresses_lowercased"].equivalent


class _RecordingTime:
    """Stands in for the client module's ``time``: sleeps are recorded, not slept."""

    def __init__(self, slept: list[float]) -> None:
        self.slept = slept

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def monotonic(self) -> float:
        return time.monotonic()


def test_wait_for_room_waits_the_window_out_only_when_too_little_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from conformance.wire import client as client_module
    from conformance.wire.client import Client

    remaining = ["3"]

    class Limited(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"data": {}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-RateLimit-Limit", "60")
            self.send_header("X-RateLimit-Remaining", remaining[0])
            self.send_header("X-RateLimit-Reset", "7")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Limited)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    slept: list[float] = []
    monkeypatch.setattr(client_module, "time", _RecordingTime(slept))
    try:
        client = Client(f"http://127.0.0.1:{server.server_address[1]}").paced()
        client.wait_for_room(20)
        assert slept == [7.5]  # 3 left of the 20 wanted: the window's 7 s, and a margin
        remaining[0] = "45"
        client.wait_for_room(20)
        assert slept == [7.5]  # enough room: no wait
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_local_is_checked_before_the_run(tmp_path: Path) -> None:
    local = "http://127.0.0.1:8080"
    remote = webhook_local_check("https://staging.example", str(tmp_path), None)
    assert (
        remote.problem
        == "needs rfqsim serve on this machine; https://staging.example is not loopback"
    )
    both = webhook_local_check(local, str(tmp_path), "https://hooks.example/qa")
    assert both.problem == "give --webhook-local or --webhook-public-url, not both"
    fresh = webhook_local_check(local, str(tmp_path), None)
    assert fresh.problem is None
    assert (
        fresh.detail == f"https on a free loopback port; {tmp_path}: no CA yet (the run creates it)"
    )
    (tmp_path / CA_FILE).write_text("a CA")
    assert webhook_local_check(local, str(tmp_path), None).detail.endswith(": its local CA")


def test_the_missing_input_table_names_exactly_what_would_run_each_rule() -> None:
    """A rule skipped because the given trades key has both taker scopes wants a key with one
    scope only: the table says that, not the key:trades input in general (which was given)."""
    only_write = skip_message("key:trades", "--api-key KEY=trades:write (and no other taker scope)")
    partner = skip_message("key:trades", "another tx_test_ key of the partner of tx_test_a…")
    wallets = skip_message("taker_wallet", "2 taker wallets (--taker-key HEX, repeated); 1 given")

    def skipped(*reasons: str) -> list[dict[str, str]]:
        return [
            {"nodeid": f"t.py::{i}", "outcome": "skipped", "reason": r, "skip_kind": MISSING_INPUT}
            for i, r in enumerate(reasons)
        ]

    rules = [
        {"id": "r/write", "status": "skipped", "skip_kind": MISSING_INPUT, "needs": ["key:trades"],
         "tests": skipped(only_write)},
        {"id": "r/two", "status": "skipped", "skip_kind": MISSING_INPUT,
         "needs": ["key:trades", "taker_wallet"], "tests": skipped(partner, wallets)},
    ]  # fmt: skip
    text = "\n".join(render_skipped(rules))
    assert (
        "| `key:trades` | --api-key KEY=trades:write (and no other taker scope) | 1: `r/write` |"
        in text
    )
    assert (
        "| `key:trades` | another tx_test_ key of the partner of tx_test_a… | 1: `r/two` |" in text
    )
    assert (
        "| `taker_wallet` | 2 taker wallets (--taker-key HEX, repeated); 1 given | 1: `r/two` |"
        in text
    )
    assert HOW["key:trades"] not in text  # the general description of an input that was given
