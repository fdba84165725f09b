"""`rfqsim webhooks listen` end to end: a real `rfqsim serve`, the listener as its own process
(certificate from the simulator's local CA, endpoint registered with an API key), a real RFQ
expiring, the verified event forwarded to a local http target, the forward target's failure
passed back (and retried), a forged delivery rejected, and the endpoint deleted on exit."""

from __future__ import annotations

import hashlib
import hmac
import os
import queue
import signal
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from conformance.wire.client import request
from conformance.wire.response_checks import parse_iso_utc
from rfqkit.webhook_receiver import (
    WebhookReceiver,
)
from tests.integration.serve_process import RFQSIM, Served, serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("webhooks-listen")]

WAIT_S = 15.0


class Lines:
    """A process's stdout, line by line, read on a thread so waits can be bounded."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))

    def wait_for(self, prefix: str, timeout: float = WAIT_S) -> str:
        for line in self.seen:
            if prefix in line:
                return line
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if prefix in line:
                return line
        raise AssertionError(f"no line with {prefix!r} in {timeout:.0f}s; got {self.seen!r}")


def _api(served: Served, method: str, path: str, body: Any = None, key: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else None
    kwargs: dict[str, Any] = {"headers": headers}
    if body is not None:
        kwargs["json"] = body
    resp = request(method, served.api_url + path, **kwargs)
    assert 200 <= resp.status < 300, resp
    return resp.json()["data"]


def _sim_now(served: Served) -> float:
    return parse_iso_utc(_api(served, "GET", "/_sim/clock")["now"]).timestamp()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One simulator for the module: the bad-key test only needs one to refuse it, and the
    listen test cleans up what it creates, so a second start-up would only cost time."""
    run_dir = tmp_path_factory.mktemp("listen")
    env = {**os.environ, "RFQSIM_STATE_DIR": str(run_dir / "state")}
    with serve(run_dir, env=env) as running:
        yield running


def test_listen_verifies_prints_forwards_and_cleans_up(served: Served, tmp_path: Path) -> None:
    key = _api(
        served,
        "POST",
        "/_sim/keys",
        {
            "partner": "listen-test",
            "environment": "test",
            "scopes": ["trades:write", "trades:read", "webhooks:manage"],
        },
    )["key"]
    with WebhookReceiver() as forward:  # plain http: where the integrator's app would listen
        forward.respond_with(500)  # the app fails once: the simulator must retry
        listen = subprocess.Popen(
            [
                str(RFQSIM),
                "webhooks",
                "listen",
                "--url",
                served.api_url,
                "--api-key",
                key,
                "--forward-to",
                forward.url,
                "--events",
                "rfq.expired,rfq.filled",
                "--print-secret",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert listen.stdout is not None
            lines = Lines(listen.stdout)
            ready = lines.wait_for("> Ready:")
            secret = lines.wait_for("> Signing secret:").rsplit(" ", 1)[1]
            assert secret.startswith("whsec_")
            (endpoint,) = _api(served, "GET", "/v1/webhooks", key=key)
            assert endpoint["url"] in ready
            assert endpoint["url"].startswith("https://127.0.0.1:")
            assert endpoint["eventTypes"] == ["rfq.expired", "rfq.filled"]

            # A forged delivery is refused (the CA lets this test speak https to the listener).
            context = ssl.create_default_context(
                cadata=_api(served, "GET", "/_sim/webhooks/ca")["ca_pem"]
            )
            forged = request(
                "POST",
                endpoint["url"],
                data=b'{"id":"rfq.expired:rfq_forged"}',
                headers={
                    "Content-Type": "application/json",
                    "Service-Event-Id": "rfq.expired:rfq_forged",
                    "Service-Signature": f"t={int(_sim_now(served))},v1={'0' * 64}",
                },
                ssl_context=context,
            )
            assert forged.status == 400
            lines.wait_for("! rejected rfq.expired:rfq_forged: signature mismatch")

            # A real event: a firm quote for a demo wallet, left to expire.
            chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
            tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
            quote = _api(
                served,
                "POST",
                "/v2/rfq/request",
                {
                    "chainId": 97,
                    "sellToken": tokens["USDT"],
                    "buyToken": tokens["NGNS"],
                    "sellAmount": str(10**18),
                    "taker": served.info["demo_wallets"][0]["address"],
                },
                key=key,
            )
            assert quote["status"] == "quoted", quote
            rfq_id = quote["rfqId"]
            event_id = f"rfq.expired:{rfq_id}"
            _api(served, "POST", "/_sim/clock/advance", {"seconds": 61})

            (first,) = forward.wait_for_requests(1, timeout=WAIT_S)
            lines.wait_for(f"rfq.expired  rfq={rfq_id}")
            lines.wait_for("[500]")

            def attempts() -> list[dict[str, Any]]:
                data = _api(served, "GET", f"/_sim/webhooks/deliveries?event_id={event_id}")
                return list(data["deliveries"][0]["attempts"]) if data["deliveries"] else []

            deadline = time.monotonic() + WAIT_S
            while not attempts() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [a["response_status"] for a in attempts()] == [500]

            _api(served, "POST", "/_sim/clock/advance", {"seconds": 5})
            _, second = forward.wait_for_requests(2, timeout=WAIT_S)
            lines.wait_for("[200]")
            for got in (first, second):
                assert got.header("Service-Event-Id") == event_id
                assert got.header("Content-Type") == "application/json"
                fields = dict(
                    p.split("=", 1) for p in (got.header("Service-Signature") or "").split(",")
                )
                mac = hmac.new(
                    secret.encode(), fields["t"].encode() + b"." + got.raw_body, hashlib.sha256
                )
                assert hmac.compare_digest(mac.hexdigest(), fields["v1"])
                assert abs(_sim_now(served) - int(fields["t"])) <= 300
            assert second.raw_body == first.raw_body
            assert second.json()["data"]["rfq"]["id"] == rfq_id

            listen.send_signal(signal.SIGINT)
            assert listen.wait(timeout=WAIT_S) == 0
            lines.wait_for(f"> Deleted endpoint {endpoint['id']}")
            assert _api(served, "GET", "/v1/webhooks", key=key) == []
        finally:
            if listen.poll() is None:
                listen.kill()
                listen.wait()
            for stream in (listen.stdout, listen.stderr):
                if stream is not None:
                    stream.close()


def test_listen_fails_cleanly_with_a_bad_key(served: Served) -> None:
    result = subprocess.run(
        [
            str(RFQSIM),
            "webhooks",
            "listen",
            "--url",
            served.api_url,
            "--api-key",
            "tx_test_000000000000.nope",
        ],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert result.returncode == 1
    assert "401 unauthorized" in result.stderr
