"""Talks to a running sandbox over real HTTP, reads the chain, and receives its webhooks."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import aiohttp
from aiohttp import web
from eth_abi.abi import decode, encode
from eth_utils.abi import function_signature_to_4byte_selector

from provider_sandbox import RunningSandbox
from rfqkit.chain import AnvilChain

CHAIN_ID = 97
WEBHOOK_SECRET = "whsec_test_receiver"
BALANCE_OF = function_signature_to_4byte_selector("balanceOf(address)")
TRANSFER = function_signature_to_4byte_selector("transfer(address,uint256)")


@dataclass
class Received:
    body: dict[str, Any]  # the parsed event
    signature_ok: bool  # verified here with our own HMAC over the raw bytes


@dataclass
class WebhookReceiver:
    secret: str
    runner: web.AppRunner
    url: str = ""
    events: list[Received] = field(default_factory=list)

    @classmethod
    async def start(cls, secret: str) -> WebhookReceiver:
        app = web.Application()
        receiver = cls(secret=secret, runner=web.AppRunner(app, access_log=None))
        app.router.add_post("/hooks", receiver.handle)
        await receiver.runner.setup()
        site = web.TCPSite(receiver.runner, "127.0.0.1", 0)
        await site.start()
        host, port = receiver.runner.addresses[0][:2]
        receiver.url = f"http://{host}:{port}/hooks"
        return receiver

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        header = request.headers.get("X-Provider-Signature", "")
        parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
        expected = hmac.new(
            self.secret.encode(), parts.get("t", "").encode() + b"." + raw, hashlib.sha256
        ).hexdigest()
        ok = hmac.compare_digest(expected, parts.get("v1", ""))
        self.events.append(Received(json.loads(raw), ok))
        return web.Response(status=204)

    def statuses(self, transfer_id: str) -> list[str]:
        return [
            e.body["data"]["transfer"]["status"]
            for e in self.events
            if e.body["data"]["transfer"]["id"] == transfer_id
        ]

    async def stop(self) -> None:
        await self.runner.cleanup()


@dataclass
class Harness:
    running: RunningSandbox
    session: aiohttp.ClientSession
    chain: AnvilChain
    token: str  # NGNS address
    receiver: WebhookReceiver

    @classmethod
    @asynccontextmanager
    async def open(
        cls, running: RunningSandbox, chain: AnvilChain, token: str, receiver: WebhookReceiver
    ) -> AsyncIterator[Harness]:
        async with aiohttp.ClientSession() as session:
            yield cls(running, session, chain, token, receiver)

    async def api(
        self, method: str, path: str, body: Any = None, *, key: str | None = None
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {key or self.running.api_key}"}
        async with self.session.request(
            method, f"{self.running.url}/api/v1{path}", json=body, headers=headers
        ) as response:
            return response.status, await response.json()

    async def control(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.session.request(
            method, f"{self.running.url}/sandbox{path}", json=body
        ) as response:
            return response.status, await response.json()

    async def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, answer = await self.control(method, path, body)
        assert status == 200, answer
        return answer

    async def advance(self, seconds: float) -> None:
        await self.ok("POST", "/clock/advance", {"seconds": seconds})

    async def transfer(self, transfer_id: str) -> dict[str, Any]:
        status, body = await self.api("GET", f"/transfers/{transfer_id}")
        assert status == 200, body
        return dict(body["transfer"])

    async def balance(self, owner: str) -> int:
        data = await self.chain.call(self.token, BALANCE_OF + encode(["address"], [owner]))
        return int(decode(["uint256"], data)[0])

    async def send_ngns(self, private_key: str, to: str, amount: Decimal) -> str:
        data = TRANSFER + encode(["address", "uint256"], [to, int(amount.scaleb(6))])
        tx_hash = await self.chain.send_transaction(
            private_key, to=self.token, data=data, gas=120_000
        )
        receipt = await self.chain.receipt(tx_hash)
        assert int(receipt["status"], 16) == 1
        return tx_hash

    async def wait_for(self, transfer_id: str, status: str, timeout_s: float = 5.0) -> None:
        """Short poll for what a background task does on its own (deposit detection)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while (await self.transfer(transfer_id))["status"] != status:
            assert loop.time() < deadline, f"{transfer_id} never became {status}"
            await asyncio.sleep(0.05)

    async def wait_webhooks(self, count: int, timeout_s: float = 5.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.receiver.events) < count:
            assert loop.time() < deadline, f"{len(self.receiver.events)} of {count} webhooks"
            await asyncio.sleep(0.02)

    # -- flows -----------------------------------------------------------------------------

    async def verified_customer(self, wallet: str, last_name: str = "Okafor") -> str:
        status, body = await self.api(
            "POST",
            "/customers",
            {
                "reference": wallet.lower(),
                "type": "individual",
                "firstName": "Ada",
                "lastName": last_name,
                "email": "ada@example.com",
                "phone": "+2348012345678",
            },
        )
        assert status == 201, body
        customer_id = str(body["customer"]["id"])
        status, body = await self.api(
            "POST", f"/customers/{customer_id}/kyc", kyc_documents("A1234567")
        )
        assert status == 200, body
        assert body["review"]["status"] == "awaiting_review"
        await self.advance(30)
        status, body = await self.api("GET", f"/customers/{customer_id}/kyc?fiat=NGN")
        assert body["review"]["status"] == "approved", body
        return customer_id

    async def buy(self, customer_id: str, destination: str, amount: str, reference: str) -> Any:
        status, quote = await self.api(
            "POST",
            "/quotes",
            {
                "side": "buy",
                "fiat": "NGN",
                "token": "NGNS",
                "chainId": CHAIN_ID,
                "amount": amount,
                "sandbox": True,
            },
        )
        assert status == 200, quote
        return await self.api(
            "POST",
            "/transfers",
            {
                "quoteId": quote["quoteId"],
                "reference": reference,
                "customerId": customer_id,
                "destination": {"address": destination, "chainId": CHAIN_ID},
                "sandbox": True,
            },
        )

    async def sell(self, amount: str, reference: str, refund_address: str) -> dict[str, Any]:
        status, resolved = await self.api(
            "POST", "/banks/resolve", {"bankCode": "058", "accountNumber": "0123456789"}
        )
        assert status == 200, resolved
        status, recipient = await self.api(
            "POST",
            "/recipients",
            {
                "customerId": None,
                "bankCode": "058",
                "accountNumber": "0123456789",
                "accountName": resolved["accountName"],
            },
        )
        assert status == 201, recipient
        status, quote = await self.api(
            "POST",
            "/quotes",
            {
                "side": "sell",
                "fiat": "NGN",
                "token": "NGNS",
                "chainId": CHAIN_ID,
                "amount": amount,
                "sandbox": True,
            },
        )
        assert status == 200, quote
        status, body = await self.api(
            "POST",
            "/transfers",
            {
                "quoteId": quote["quoteId"],
                "reference": reference,
                "customerId": None,
                "recipientId": recipient["recipientId"],
                "refundAddress": refund_address,
                "sandbox": True,
            },
        )
        assert status == 201, body
        return dict(body["transfer"])


def kyc_documents(number: str) -> dict[str, Any]:
    return {
        "document": {"type": "passport", "number": number, "imageFront": "aGVsbG8="},
        "selfieImage": "aGVsbG8=",
    }
