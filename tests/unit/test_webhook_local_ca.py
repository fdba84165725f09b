"""The local CA: created once per state directory, shared, private, and trusted by the sender."""

from __future__ import annotations

import asyncio
import ssl
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from simulator.adapters.webhooks.local_ca import (
    CA_FILE,
    LocalCa,
    load_or_create,
    resolve_state_dir,
)
from simulator.adapters.webhooks.sender import ssl_context


def test_state_dir_resolution() -> None:
    assert resolve_state_dir("/x/y", {"RFQSIM_STATE_DIR": "/env"}) == Path("/x/y")
    assert resolve_state_dir(None, {"RFQSIM_STATE_DIR": "/env"}) == Path("/env")
    assert resolve_state_dir(None, {}) == Path(".rfqsim")


def test_created_once_and_kept_private(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = load_or_create(state)
    path = state / CA_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    again = load_or_create(state)
    assert again.cert_pem.bytes() == first.cert_pem.bytes()
    assert [p.name for p in state.iterdir()] == [CA_FILE]  # no temporary files left


def test_concurrent_creators_agree_on_one_ca(tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        cas = list(pool.map(lambda _: load_or_create(tmp_path), range(8)))
    assert len({ca.cert_pem.bytes() for ca in cas}) == 1
    assert [p.name for p in tmp_path.iterdir()] == [CA_FILE]


def test_a_damaged_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / CA_FILE).write_bytes(b"nonsense")
    with pytest.raises(ValueError, match="local CA file"):
        load_or_create(tmp_path)


async def test_issued_certificates_verify_against_the_ca(tmp_path: Path) -> None:
    ca = LocalCa(tmp_path)
    issued = await ca.issue(["127.0.0.1", "localhost"])
    assert issued.ca_pem == await ca.ca_pem()
    assert issued.cert_pem.startswith(b"-----BEGIN CERTIFICATE-----")
    assert b"PRIVATE KEY" in issued.key_pem
    # A TLS handshake between a server using the certificate and the sender's context.
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    (tmp_path / "c.pem").write_bytes(issued.cert_pem)
    (tmp_path / "k.pem").write_bytes(issued.key_pem)
    server_context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hi")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    try:
        for host in ("127.0.0.1", "localhost"):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=ssl_context(issued.ca_pem), server_hostname=host
            )
            assert await reader.read() == b"hi"
            writer.close()
            await writer.wait_closed()
    finally:
        server.close()
        await server.wait_closed()
