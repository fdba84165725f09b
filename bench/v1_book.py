"""The v1 book: GET /v1/order-book and GET /v1/limit-orders/quote throughput with 200 resting
orders per side against the bare aiohttp baseline of the same run, POST /v1/swaps latency
composing 10 whole orders, and the delay from a fill's receipt to GET /v1/limit-orders/{id}
reading FILLED.

`rfqsim serve --no-makers` with bench/v1_book.yaml (a built swap holds its orders for a
millisecond only, so every create composes the same ten best orders). The orders are real:
ten maker wallets funded from a demo wallet, each resting 20 orders per side on chain 97's
USDC/NGNS, prepared, signed with eth_signTypedData_v4 and submitted through the API."""

from __future__ import annotations

import asyncio
import statistics
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
from eth_account import Account
from eth_account.messages import encode_typed_data

from bench import processes
from bench.load import LoadResult, merge, percentile, run_load
from bench.report import Section
from bench.sim_api import open_limits
from conformance.deployment.funding import fund_wallet
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import Chain
from conformance.wire.client import Client
from rfqkit.wallets import Wallet

CONFIG = Path(__file__).with_name("v1_book.yaml")
CHAIN_ID = 97
MAKERS = 10
PER_SIDE = 200
COMPOSED = 10
MAX_UINT256 = 2**256 - 1
THROUGHPUT_TARGET = 0.3
SWAP_P99_TARGET_MS = 30.0
FILL_P99_TARGET_MS = 300.0


class Book:
    """The bench's venue view: chain, tokens, key, makers and the orders they rest."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.api = str(info["api_url"])
        chain = next(c for c in info["chains"] if c["chain_id"] == CHAIN_ID)
        self.node = Chain(str(chain["rpc_url"]), CHAIN_ID)
        self.tokens = {t["symbol"]: str(t["address"]) for t in chain["tokens"]}
        self.signature_transfer = str(chain["contracts"]["signature_transfer"])
        self.reactor = str(chain["contracts"]["reactor"])
        demo = info["demo_wallets"][-1]
        self.source = Wallet(str(demo["address"]), str(demo["private_key"]))
        http = Client(self.api)
        key = SimControl(http).create_key(
            "bench-v1", "test", ["quotes:read", "trades:read", "trades:write"], tier="unlimited"
        )
        self.headers = {"Authorization": f"Bearer {key['key']}"}
        self.client = http.with_headers(self.headers)
        self.orders: dict[tuple[str, str, str], str] = {}  # (maker, sell, buy amounts) -> id

    def makers(self) -> list[Wallet]:
        usdc, ngns = self.tokens["USDC"], self.tokens["NGNS"]
        made = []
        for _ in range(MAKERS):
            maker = fund_wallet_plain(self, {ngns: 50_000 * 10**6, usdc: 100 * 10**6})
            for token in (ngns, usdc):
                self.node.approve(maker, token, self.signature_transfer, MAX_UINT256)
            made.append(maker)
        return made

    def rest(self, maker: Wallet, sell: str, sell_amount: int, buy: str, buy_amount: int) -> None:
        deadline = int(time.time()) + 86_400
        resp = self.client.post(
            "/v1/limit-orders/prepare",
            json={
                "chainId": CHAIN_ID,
                "maker": maker.address,
                "sellToken": sell,
                "sellAmount": str(sell_amount),
                "buyToken": buy,
                "buyAmount": str(buy_amount),
                "deadline": deadline,
            },
        )
        assert resp.status == 200, resp
        prepared = resp.json()["data"]
        message = encode_typed_data(full_message=prepared["typedData"])
        signature = Account.sign_message(message, maker.private_key).signature
        body = {**prepared["order"], "signature": "0x" + bytes(signature).hex()}
        placed = self.client.post("/v1/limit-orders", json=body)
        assert placed.status == 201, placed
        key = (maker.address, str(sell_amount), str(buy_amount))
        self.orders[key] = str(placed.json()["data"]["id"])

    def fill_both_sides(self, makers: list[Wallet]) -> None:
        usdc, ngns = self.tokens["USDC"], self.tokens["NGNS"]
        for i in range(PER_SIDE):
            maker = makers[i % MAKERS]
            # Distinct rates, so every order is its own level and its own key.
            self.rest(maker, ngns, (1500 + i) * 10**6, usdc, 10**6)
            self.rest(maker, usdc, 10**6, ngns, (1700 + i) * 10**6)


def fund_wallet_plain(book: Book, tokens: dict[str, int]) -> Wallet:
    """A fresh wallet with native coin and `tokens` from the demo wallet."""
    chain = VenueChain(
        chain_id=CHAIN_ID,
        environment="test",
        rpc_url=book.node.url,
        contracts={},
        tokens={},
        min_size=Decimal(0),
    )
    return fund_wallet(chain, book.source, tokens)


async def _throughput(
    base_url: str, book: Book, seconds: float, rounds: int, concurrency: int
) -> dict[str, LoadResult]:
    usdc, ngns = book.tokens["USDC"], book.tokens["NGNS"]
    urls = {
        "bare aiohttp handler (baseline)": (f"{base_url}/v2/health", None),
        "GET /v1/order-book (200 offers)": (
            f"{book.api}/v1/order-book?chainId={CHAIN_ID}&sellToken={usdc}&buyToken={ngns}",
            book.headers,
        ),
        "GET /v1/limit-orders/quote": (
            f"{book.api}/v1/limit-orders/quote?chainId={CHAIN_ID}&sellToken={ngns}"
            f"&buyToken={usdc}&sellAmount=1600000000",
            book.headers,
        ),
    }
    runs: dict[str, list[LoadResult]] = {name: [] for name in urls}
    for _ in range(rounds):  # interleaved, so drift on the machine hits every row alike
        for name, (url, headers) in urls.items():
            runs[name].append(
                await run_load(url, concurrency=concurrency, seconds=seconds, headers=headers)
            )
    return {name: merge(results) for name, results in runs.items()}


async def _swap_latencies(book: Book, requests: int) -> list[float]:
    usdc, ngns = book.tokens["USDC"], book.tokens["NGNS"]
    async with aiohttp.ClientSession() as session:
        url = f"{book.api}/v1/order-book?chainId={CHAIN_ID}&sellToken={usdc}&buyToken={ngns}"
        async with session.get(url, headers=book.headers) as resp:
            offers = (await resp.json())["data"]["offers"]
        cost = sum(int(o["sellAmount"]) for o in offers[:COMPOSED])
        body = {
            "chainId": CHAIN_ID,
            "sellToken": usdc,
            "buyToken": ngns,
            "sellAmount": str(cost),
            "taker": book.source.address,
            "requireFullFill": True,
        }
        latencies: list[float] = []
        for _ in range(requests):
            started = time.perf_counter()
            async with session.post(f"{book.api}/v1/swaps", json=body, headers=book.headers) as r:
                data = await r.json()
            latencies.append((time.perf_counter() - started) * 1000)
            assert r.status == 201, data
            assert len(data["data"]["orders"]) == COMPOSED, data
    return latencies


async def _fill_delays(book: Book, fills: int) -> list[float]:
    usdc, ngns = book.tokens["USDC"], book.tokens["NGNS"]
    taker = fund_wallet_plain(book, {usdc: 10**9})
    book.node.approve(taker, usdc, book.reactor, MAX_UINT256)
    delays: list[float] = []
    async with aiohttp.ClientSession() as session:
        for _ in range(fills):
            url = f"{book.api}/v1/order-book?chainId={CHAIN_ID}&sellToken={usdc}&buyToken={ngns}"
            async with session.get(url, headers=book.headers) as resp:
                top = (await resp.json())["data"]["offers"][0]
            body = {
                "chainId": CHAIN_ID,
                "sellToken": usdc,
                "buyToken": ngns,
                "sellAmount": top["sellAmount"],
                "taker": taker.address,
                "requireFullFill": True,
            }
            async with session.post(f"{book.api}/v1/swaps", json=body, headers=book.headers) as r:
                swap = (await r.json())["data"]
            order_id = book.orders[
                (
                    top["maker"],
                    top["buyAmount"],
                    str(int(top["sellAmount"]) - int(top["feeAmount"])),
                )
            ]
            batch = swap["transactions"]["swap"]
            book.node.transact(taker, batch["to"], bytes.fromhex(batch["data"][2:]))
            mined = time.perf_counter()  # the receipt is in hand: the fill is on chain
            while True:
                async with session.get(
                    f"{book.api}/v1/limit-orders/{order_id}", headers=book.headers
                ) as resp:
                    record = (await resp.json())["data"]
                if record["status"] == "FILLED":
                    delays.append((time.perf_counter() - mined) * 1000)
                    break
                if time.perf_counter() - mined > 10:
                    break
                await asyncio.sleep(0.005)
    return delays


def bench_v1_book(
    seconds: float, rounds: int, concurrency: int, swaps: int, fills: int
) -> list[Section]:
    with (
        processes.baseline_server() as base_url,
        processes.simulator("--no-makers", "--config", str(CONFIG)) as started,
    ):
        open_limits(started.info["api_url"])
        book = Book(started.info)
        book.fill_both_sides(book.makers())
        runs = asyncio.run(_throughput(base_url, book, seconds, rounds, concurrency))
        latencies = asyncio.run(_swap_latencies(book, swaps))
        delays = asyncio.run(_fill_delays(book, fills))
    baseline = next(iter(runs.values()))
    reads = Section(
        title="v1 book reads: GET /v1/order-book and GET /v1/limit-orders/quote",
        intro=(
            f"{PER_SIDE} resting orders per side on chain 97's USDC/NGNS ({MAKERS} makers, real "
            f"signed orders), closed loop, {concurrency} connections, {rounds} interleaved rounds "
            f"of {seconds:.0f} s; a key with quotes:read. Every read first reads the chain head "
            "(a read started after the request arrived, shared by the requests waiting for it) "
            "and answers from the makers' funding and nonces at that block. Baseline: the bare "
            "aiohttp JSON handler in the same run."
        ),
        header=("endpoint", "requests/s", "median ms", "p99 ms", "errors", "ratio", "target"),
    )
    for name, result in runs.items():
        ratio = result.throughput / baseline.throughput
        reads.rows.append(
            (
                name,
                f"{result.throughput:.0f}",
                f"{result.median_ms:.2f}",
                f"{percentile(result.latencies_ms, 99):.2f}",
                str(result.errors),
                f"{ratio:.2f}",
                "—" if result is baseline else f"≥ {THROUGHPUT_TARGET}",
            )
        )
    swaps_section = Section(
        title="v1 instant swaps: POST /v1/swaps composing 10 orders",
        intro=(
            f"{swaps} sequential creates with requireFullFill, each composing the ten best of "
            f"the {PER_SIDE} resting orders (checked at the current block), holds released at "
            "once (bench/v1_book.yaml) so every create composes anew."
        ),
        header=("measure", "value", "target"),
    )
    swaps_section.rows += [
        ("creates", str(len(latencies)), str(swaps)),
        ("median latency", f"{statistics.median(latencies):.1f} ms", "—"),
        ("p99 latency", f"{percentile(latencies, 99):.1f} ms", f"≤ {SWAP_P99_TARGET_MS:.0f} ms"),
    ]
    fills_section = Section(
        title="v1 fill reconciliation: receipt to GET /v1/limit-orders/{id} FILLED",
        intro=(
            f"{fills} swaps of one resting order, broadcast by a taker without /submit; time "
            "from the receipt being available (automine) until the order reads FILLED, polled "
            "every 5 ms. A read that finds the nonce spent lets the fill index catch up first."
        ),
        header=("measure", "value", "target"),
    )
    fills_section.rows += [
        ("fills measured", str(len(delays)), str(fills)),
        ("median delay", f"{statistics.median(delays):.0f} ms", "—"),
        ("p99 delay", f"{percentile(delays, 99):.0f} ms", f"≤ {FILL_P99_TARGET_MS:.0f} ms"),
    ]
    return [reads, swaps_section, fills_section]
