"""`rfqsim proxy` as a real child process for integration tests (conformance/wire/proxy_process.py):
started on a free port in front of an upstream, stopped with SIGINT, its report read back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conformance.wire.proxy_process import ProxyProcess, service_violations, summary
from tests.integration.serve_process import RFQSIM

__all__ = ["ProxyProcess", "proxy", "service_violations", "summary"]


@contextmanager
def proxy(upstream: str, report_dir: Path, *args: str) -> Iterator[ProxyProcess]:
    """A proxy listening on a free loopback port; stopped (SIGINT) on leaving if still running."""
    running = ProxyProcess(str(RFQSIM), upstream, report_dir, args)
    running.start()
    try:
        yield running
    finally:
        running.stop()
