"""Keys and claim tokens never reach the logs or error messages, even with the access log on."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.integration.serve_process import RFQSIM, wait_ready

pytestmark = pytest.mark.integration


def call(url: str, body: dict[str, object] | None, headers: dict[str, str]) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def raw_exchange(port: int, raw: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_secrets_stay_out_of_logs_and_errors(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    log_file = tmp_path / "stderr.log"
    with log_file.open("w") as stderr:
        process = subprocess.Popen(
            [
                str(RFQSIM),
                "serve",
                "--port",
                "0",
                "--rpc-port",
                "0",
                "--ready-file",
                str(ready),
                "--access-log",
            ],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            info = wait_ready(process, ready, log=log_file)  # type: ignore[arg-type]
            api = info["api_url"]
            key = next(k["key"] for k in info["demo_keys"] if k["label"] == "taker-test")
            chain = next(c for c in info["chains"] if c["chain_id"] == 97)
            tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
            body = {
                "chainId": 97,
                "sellToken": tokens["USDT"],
                "buyToken": tokens["NGNS"],
                "sellAmount": str(10**18),
                "taker": info["demo_wallets"][0]["address"],
            }
            status, answer = call(f"{api}/v2/rfq/request", body, {"Authorization": f"Bearer {key}"})
            assert status == 200
            claim = json.loads(answer)["data"]["claimToken"]
            rfq_id = json.loads(answer)["data"]["rfqId"]
            wrong_secret = key.split(".")[0] + "." + "Z" * 43
            for headers in (
                {"X-API-Key": wrong_secret},
                {"Authorization": f"Bearer {wrong_secret}"},
            ):
                status, answer = call(f"{api}/v2/rfq/{rfq_id}", None, headers)
                assert status == 401
                assert wrong_secret.split(".")[1] not in answer
            status, answer = call(f"{api}/v2/rfq/{rfq_id}", None, {"X-Rfq-Claim": claim + "x"})
            assert status == 404
            assert claim not in answer
            status, _ = call(f"{api}/v2/rfq/{rfq_id}", None, {"X-Rfq-Claim": claim})
            assert status == 200
            # Headers the HTTP parser refuses (a stray control character): answered in the
            # envelope by the server itself, and neither the answer nor the log quotes them.
            port = int(api.rsplit(":", 1)[1])
            for header in (
                f"Authorization: Bearer {key}\x00",
                f"X-API-Key: {key}\r",
                f"X-Rfq-Claim: {claim[:12]}\x00{claim[12:]}",
            ):
                raw = f"GET /v2/rfq/{rfq_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}\r\n\r\n"
                refused = raw_exchange(port, raw.encode())
                assert refused.startswith(b"HTTP/1.0 400 "), refused[:200]
                assert b'"code":"invalid_request"' in refused
                assert b"X-Request-Id: req_" in refused
                for secret in (key.split(".")[1], claim[12:]):
                    assert secret.encode() not in refused
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    logged = log_file.read_text()
    assert "/v2/rfq/request" in logged  # the access log did record the requests
    for secret in (key.split(".")[1], wrong_secret.split(".")[1], claim, claim[12:]):
        assert secret not in logged
    assert "refused a malformed request" in logged  # the three were logged, without secrets
