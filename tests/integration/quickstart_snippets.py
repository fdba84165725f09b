"""The integrator quickstart's snippets (docs/quickstart-integrator.md) read from the page and
run in order, as an integrator pastes them: shared by the quickstart's own test and the one that
runs it through rfqsim proxy."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from rfqkit.free_ports import unclaimed_port
from tests.integration.rfq_world import Api
from tests.integration.serve_process import REPO

DOC = REPO / "docs" / "quickstart-integrator.md"


PYTHON = REPO / ".venv" / "bin" / "python"  # what the page runs its Python snippets with


WAIT_S = 60.0
V1_SELL_AMOUNT = 200_000_000  # the v1 snippets' sellAmount: 200 USDC


def snippets() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = dict(re.findall(r"<!-- snippet: ([a-z0-9-]+) -->\n```[a-z]+\n(.*?)```", text, re.S))
    assert set(found) == {
        "curl-quote",
        "python-flow",
        "viem-flow",
        "v1-swap-curl",
        "v1-swap-python",
        "python-webhook-receiver",
        "listen",
        "trigger",
    }
    return found


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


def book_offers(api: Api, key: str) -> list[dict[str, Any]]:
    """The v1 book's USDC -> NGNS offers on chain 97 (read with a key of its own: the demo key's
    per-minute budget is the snippets')."""
    path = f"/v1/order-book?chainId=97&sellToken={api.token('USDC')}&buyToken={api.token('NGNS')}"
    return list(api.data("GET", path, key=key)["offers"])


def enough_for_the_snippets(offers: list[dict[str, Any]]) -> bool:
    """Three whole orders of at most the snippets' 200 USDC each (the curl swap holds what it
    composed for 60 s, the Python swap needs others)."""
    return sum(int(o["sellAmount"]) <= V1_SELL_AMOUNT for o in offers) >= 3


def wait_for_book_offers(api: Api, key: str) -> None:
    """Until the book offers what the v1 snippets take again: the simulated fleet tops up what
    earlier rounds took every 20 s."""
    deadline = time.monotonic() + WAIT_S
    while not enough_for_the_snippets(offers := book_offers(api, key)):
        assert time.monotonic() < deadline, offers
        time.sleep(1)


def run_every_snippet(code: dict[str, str], env: dict[str, str], scratch: Path) -> None:
    """Each snippet once, as the page says to run it."""
    scratch.mkdir()
    # 1. curl, with the key.
    quote = json.loads(run(["bash", "-c", code["curl-quote"]], env))["data"]
    assert quote["status"] == "quoted", quote

    # 2a. Python, keyless: proof, quote, approve, swap, poll until filled.
    (scratch / "quickstart.py").write_text(code["python-flow"])
    out = run([str(PYTHON), str(scratch / "quickstart.py")], env)
    assert re.match(r"quoted (rfq_[0-9a-f]+) buyAmount \d+\n", out), out
    assert re.search(r"^filled rfq_[0-9a-f]+ txHash 0x[0-9a-f]{64}$", out, re.M), out

    # 2b. viem: the same flow.
    script = scratch / "quickstart.mjs"
    script.write_text(code["viem-flow"])
    (scratch / "node_modules").symlink_to(REPO / "node_modules")
    out = run(["node", str(script)], env, cwd=scratch)
    assert re.search(r"^filled rfq_[0-9a-f]+ txHash 0x[0-9a-f]{64}$", out, re.M), out

    # 3. The v1 swap: created with curl; the whole flow in Python.
    swap = json.loads(run(["bash", "-c", code["v1-swap-curl"]], env))["data"]
    assert (swap["status"], set(swap["transactions"])) == ("QUOTED", {"approval", "swap"}), swap
    (scratch / "v1_swap.py").write_text(code["v1-swap-python"])
    out = run([str(PYTHON), str(scratch / "v1_swap.py")], env)
    assert re.search(r"^FILLED sw_[0-9a-f]+ txHash 0x[0-9a-f]{64} proceeds \d+$", out, re.M), out

    # 4. The webhook: listen forwards to the handler, trigger makes the venue send one.
    port = unclaimed_port()
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
        (scratch / "handler.py").write_text(code["python-webhook-receiver"])
        handler = subprocess.Popen(
            [str(PYTHON), str(scratch / "handler.py")],
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
