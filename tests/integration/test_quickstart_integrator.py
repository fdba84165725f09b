"""docs/quickstart-integrator.md runs as written: every snippet is copied out of the document
and executed against a real `rfqsim serve` (seed 0, free ports): the curl firm quote, the proof
signed with eth-account, the viem flow (proof, quote, approve, swap, poll until filled) and the
webhook handler's standard t=...,v1=... verifier receiving a real rfq.filled through
`rfqsim webhooks listen --forward-to` after `rfqsim trigger rfq.filled`. The document's literal
values (demo key, wallets, token addresses) must be what seed 0 gives, so it cannot rot."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest

from tests.integration.serve_process import REPO, serve

pytestmark = pytest.mark.integration

DOC = REPO / "docs" / "quickstart-integrator.md"
WAIT_S = 60.0


def snippets() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = dict(re.findall(r"<!-- snippet: ([a-z0-9-]+) -->\n```[a-z]+\n(.*?)```", text, re.S))
    assert set(found) == {
        "curl-quote",
        "python-proof",
        "viem-flow",
        "python-webhook-receiver",
        "listen",
        "trigger",
    }
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def lines_of(stream: IO[str]) -> queue.Queue[str]:
    """The stream's lines as they come, read by a thread (so a wait can time out)."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        try:
            for line in stream:
                lines.put(line.rstrip("\n"))
        except (ValueError, OSError):  # the stream was closed at the end of the test
            pass

    threading.Thread(target=pump, daemon=True).start()
    return lines


def wait_line(lines: queue.Queue[str], pattern: str, seen: list[str]) -> re.Match[str]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        match = re.search(pattern, line)
        if match:
            return match
    raise AssertionError(f"no line matching {pattern!r}; got {seen!r}")


def wait_listening(port: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def run(command: list[str], env: dict[str, str], cwd: Path = REPO) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{command[:2]} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def stop_group(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


def receive_filled_webhook(code: dict[str, str], env: dict[str, str]) -> None:
    """The snippets' webhook: `listen` registers and forwards to the handler, `trigger` makes
    the venue send rfq.filled, the handler verifies it."""
    port = free_port()
    hook_env = {**env, "PORT": str(port)}
    listen = subprocess.Popen(
        ["bash", "-c", code["listen"]],
        cwd=REPO,
        env=hook_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    handler: subprocess.Popen[str] | None = None
    try:
        assert listen.stdout is not None
        listen_lines = lines_of(listen.stdout)
        seen: list[str] = []
        secret = wait_line(listen_lines, r"Signing secret: (whsec_\S+)", seen).group(1)
        wait_line(listen_lines, r"> Forwarding to", seen)
        handler = subprocess.Popen(
            [sys.executable, "-c", code["python-webhook-receiver"]],
            env={**hook_env, "WEBHOOK_SECRET": secret},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        wait_listening(port)
        out = run(["bash", "-c", code["trigger"]], env)
        rfq_id = re.search(r"rfq\.filled (rfq_[0-9a-f]+)", out)
        assert rfq_id, out
        assert "delivered to 1 endpoint" in out, out
        assert handler.stdout is not None
        wait_line(lines_of(handler.stdout), rf"^verified rfq\.filled {rfq_id.group(1)}$", [])
    finally:
        stop_group(listen)
        if handler is not None:
            stop_group(handler)


def test_every_snippet_of_the_integrator_quickstart_runs(tmp_path: Path) -> None:
    code = snippets()
    text = DOC.read_text(encoding="utf-8")
    with serve(tmp_path, "--seed", "0") as served:
        info = served.info
        chain = next(c for c in info["chains"] if c["chain_id"] == 97)
        tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
        key = next(k["key"] for k in info["demo_keys"] if k["label"] == "taker-test")
        # The document's literals are what `just serve` prints under seed 0.
        for literal in (
            key,
            tokens["USDC"],
            tokens["USDT"],
            info["demo_wallets"][0]["address"],
            info["demo_wallets"][0]["private_key"],
            info["demo_wallets"][1]["address"],
            info["demo_wallets"][1]["private_key"],
        ):
            assert literal in text, literal
        env = {**os.environ, "API": served.api_url, "RPC": chain["rpc_url"], "KEY": key}

        # 1. curl, with the key.
        quote = json.loads(run(["bash", "-c", code["curl-quote"]], env))["data"]
        assert quote["status"] == "quoted", quote

        # 2a. The proof in Python, keyless.
        out = run([sys.executable, "-c", code["python-proof"]], env)
        assert re.match(r"quoted rfq_[0-9a-f]+ claim: \S+", out), out

        # 2b. viem: proof, quote, approve, swap, poll until filled.
        script = tmp_path / "quickstart.mjs"
        script.write_text(code["viem-flow"])
        (tmp_path / "node_modules").symlink_to(REPO / "node_modules")
        out = run(["node", str(script)], env, cwd=tmp_path)
        assert re.search(r"^filled rfq_[0-9a-f]+ txHash 0x[0-9a-f]{64}$", out, re.M), out

        # 3. The webhook: listen forwards to the handler, trigger makes the venue send one.
        receive_filled_webhook(code, env)
