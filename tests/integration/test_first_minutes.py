"""The first ten minutes, as a new user meets `rfqsim serve` in a shell: a taken port or an
unreachable node is one line and an exit code, before anything starts; the banner's every URL
answers, the chains listen on the RPC ports asked for, the contracts are listed once, the demo
keys come with their scopes and are the same under the same seed."""

from __future__ import annotations

import re
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rfqkit.free_ports import unclaimed_port
from rfqkit.json_rpc import rpc
from tests.integration.serve_process import RFQSIM, wait_ready

pytestmark = pytest.mark.integration


@contextmanager
def listening() -> Iterator[int]:
    """A port some other program holds (listening), for the length of the block."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RFQSIM), *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_a_taken_api_port_is_one_line_and_exit_3_before_anything_starts() -> None:
    with listening() as port:
        result = run_cli("serve", "--port", str(port), "--rpc-port", "0")
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # no log line: no chain or sandbox was started
    assert f"port {port}" in lines[0]
    assert "the API" in lines[0]
    assert "--port PORT" in lines[0]


def test_a_taken_chain_port_names_the_chain_and_the_flag_that_moves_it() -> None:
    with listening() as port:
        result = run_cli("serve", "--port", "0", "--rpc-port", "0", "--rpc-port", f"97={port}")
    assert result.returncode == 3
    (line,) = result.stderr.strip().splitlines()
    assert f"port {port}" in line
    assert "chain 97 RPC" in line
    assert "--rpc-port 97=PORT" in line


def test_an_unreachable_rpc_url_is_one_line_not_a_traceback() -> None:
    result = run_cli(
        "serve", "--port", "0", "--rpc-port", "0", "--rpc-url", "97=http://127.0.0.1:1"
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("rfqsim: chain 97: no JSON-RPC node answers at http://127.0.0.1:1")
    assert "--rpc-url" in last


@contextmanager
def served(tmp_path: Path, *args: str) -> Iterator[tuple[dict[str, Any], str]]:
    ready = tmp_path / "ready.json"
    out = tmp_path / "stdout.txt"
    with out.open("w") as stdout:
        process = subprocess.Popen(
            [str(RFQSIM), "serve", "--port", "0", "--ready-file", str(ready), *args],
            stdout=stdout,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            info = wait_ready(process, ready)
            yield info, out.read_text()
        finally:
            process.terminate()
            process.wait(timeout=30)
            assert process.stderr is not None
            process.stderr.close()


def answers(url: str, rpc_urls: set[str]) -> bool:
    if url in rpc_urls:  # a chain answers JSON-RPC
        return rpc(url, "eth_chainId", timeout=10) is not None
    with urllib.request.urlopen(url, timeout=10) as response:
        return bool(response.status == 200)


def test_the_banner_pins_the_rpc_ports_every_url_answers_and_demo_keys_repeat(
    tmp_path: Path,
) -> None:
    base = unclaimed_port(span=2)  # the two chains' RPC ports
    runs: list[list[str]] = []
    for index in range(2):
        run_dir = tmp_path / str(index)
        run_dir.mkdir()
        with served(run_dir, "--seed", "5", "--rpc-port", str(base)) as (info, banner):
            rpc = [c["rpc_url"] for c in info["chains"]]
            assert rpc == [f"http://127.0.0.1:{base}", f"http://127.0.0.1:{base + 1}"]
            runs.append([k["key"] for k in info["demo_keys"]])
            if index:
                continue
            urls = set(re.findall(r"http://127\.0\.0\.1:[0-9]+[^\s),]*", banner))
            assert len(urls) >= 8, banner
            for url in sorted(urls):
                assert answers(url, set(rpc)), url
            assert banner.count("contracts and tokens") == 1, banner
            assert banner.count(info["chains"][0]["contracts"]["reactor"]) == 1, banner
            for key in info["demo_keys"]:
                assert key["key"] in banner
                assert "scopes " + " ".join(key["scopes"]) in banner
            assert "1,000,000 of every token" in banner
            assert "Ctrl-C" in banner
            # A demo key is a working key.
            request = urllib.request.Request(
                info["api_url"] + "/v2/rfq/rfq_000000000000000000000000",
                headers={"Authorization": f"Bearer {info['demo_keys'][0]['key']}"},
            )
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(request, timeout=10)
            caught.value.close()
            assert caught.value.code == 404  # known key, unknown RFQ (a bad key is 401)
    assert runs[0] == runs[1], "the same seed gives the same demo keys"
