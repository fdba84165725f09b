"""Write the four OpenAPI documents exactly as the simulator serves them, or compare them with a
copy written before a change: a refactoring must leave every byte of the API's description as it
was.

    .venv/bin/python scripts/openapi_documents.py write /tmp/openapi-before
    ... change the code ...
    .venv/bin/python scripts/openapi_documents.py compare /tmp/openapi-before

The app is built without chains (`create_app(..., start_chains=False)`): the documents come from
the route table and the models alone."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from simulator.runtime.app import create_app
from simulator.settings import load_settings

DOCUMENTS = ("/v2/openapi.json", "/v1/openapi.json", "/_sim/openapi.json", "/feed/openapi.json")


def file_name(path: str) -> str:
    return path.strip("/").replace("/", "_")


async def served() -> dict[str, bytes]:
    """Each document's bytes as a client receives them."""
    app = create_app(load_settings(), start_chains=False)
    found: dict[str, bytes] = {}
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        for path in DOCUMENTS:
            response = await client.get(path)
            if response.status != 200:
                raise SystemExit(f"GET {path} answered {response.status}")
            found[path] = await response.read()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("write", "compare"))
    parser.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    documents = asyncio.run(served())
    if args.action == "write":
        args.directory.mkdir(parents=True, exist_ok=True)
        for path, body in documents.items():
            (args.directory / file_name(path)).write_bytes(body)
            print(f"{path}: {len(body)} bytes")
        return 0
    changed = 0
    for path, body in documents.items():
        before = (args.directory / file_name(path)).read_bytes()
        same = before == body
        changed += not same
        verdict = "identical" if same else "DIFFERENT"
        print(f"{path}: {verdict} ({len(before)} -> {len(body)} bytes)")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
