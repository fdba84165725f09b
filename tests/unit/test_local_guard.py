"""The local guard's rules (rfqkit/local_guard.py): which Host names a server answers and which
state-changing requests count as sent by another site."""

from __future__ import annotations

import logging

import pytest

from rfqkit.local_guard import HostCheck, cross_site_reason, host_name, origin_of


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost", "localhost"),
        ("LocalHost:8080", "localhost"),
        ("127.0.0.1:8080", "127.0.0.1"),
        ("[::1]:8080", "::1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("Attacker.Example.:80", "attacker.example"),
        ("box.lan", "box.lan"),
    ],
)
def test_the_name_of_a_host_header_drops_port_brackets_case_and_final_dot(
    header: str, name: str
) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:8080",
        "LOCALHOST:1",
        "app.localhost:5173",
        "127.0.0.1",
        "127.0.0.1:8080",
        "127.0.0.2:8080",  # any 127/8 address is loopback
        "[::1]:8080",
        "[::1]",
        "0.0.0.0:8080",  # what the fleet sends when the server binds 0.0.0.0
        "192.168.1.20:8080",  # an address: no name a page could re-point
        "[fe80::1]:8080",
        None,  # no Host at all: not a browser
        "",
    ],
)
def test_loopback_names_and_addresses_are_answered_without_any_setting(host: str | None) -> None:
    assert HostCheck(bind="127.0.0.1").allows(host)


@pytest.mark.parametrize(
    "host",
    [
        "attacker.example",
        "attacker.example:8080",
        "localhost.attacker.example:8080",  # not under .localhost
        "127.0.0.1.attacker.example",
        "box.lan:8080",
        "mylocalhost:8080",
    ],
)
def test_any_other_name_is_refused(host: str) -> None:
    assert not HostCheck(bind="127.0.0.1").allows(host)


def test_listed_names_and_the_bind_name_are_answered_with_any_port() -> None:
    check = HostCheck(bind="box.lan", allowed=("Sim.Example", ".corp.example"))
    assert check.allows("box.lan:8080")
    assert check.allows("sim.example:443")
    assert check.allows("sim.example.")
    assert check.allows("corp.example")
    assert check.allows("a.b.corp.example:8080")
    assert not check.allows("other.example")
    assert not check.allows("notcorp.example")
    assert not check.allows("sim.example.attacker.example")


def test_a_refusal_names_the_host_and_the_fix_and_is_logged_once_per_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    check = HostCheck(bind="127.0.0.1", server="rfqsim serve")
    with caplog.at_level(logging.WARNING, logger="rfqsim.guard"):
        message, details = check.refusal("Attacker.Example:8080")
        check.refusal("attacker.example:9999")
        check.refusal("other.example")
    assert details == {"reason": "host_not_allowed", "host": "attacker.example"}
    assert "--allowed-host attacker.example" in message
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert "'attacker.example'" in lines[0]
    assert "'other.example'" in lines[1]


def test_origins_compare_with_default_ports_made_explicit() -> None:
    assert origin_of("http://127.0.0.1") == ("http", "127.0.0.1", 80)
    assert origin_of("http://127.0.0.1:80") == origin_of("http://127.0.0.1")
    assert origin_of("https://Box.Lan") == ("https", "box.lan", 443)
    assert origin_of("http://[::1]:8080") == ("http", "::1", 8080)
    assert origin_of("null") is None
    assert origin_of("http://x:notaport") is None


OWN = ("http", "127.0.0.1:8080")


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "get"])
def test_reads_are_never_judged(method: str) -> None:
    headers = {"Sec-Fetch-Site": "cross-site", "Origin": "http://attacker.example"}
    assert cross_site_reason(method, headers, *OWN) is None


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, None),  # curl, test clients
        ({"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8080"}, None),
        ({"Sec-Fetch-Site": "none"}, None),  # the user typed it
        ({"Origin": "http://127.0.0.1:8080"}, None),
        ({"Sec-Fetch-Site": "cross-site"}, "sec_fetch_site_cross_site"),
        ({"Sec-Fetch-Site": "Same-Site"}, "sec_fetch_site_same_site"),
        ({"Origin": "http://attacker.example"}, "foreign_origin"),
        ({"Origin": "http://127.0.0.1:9999"}, "foreign_origin"),  # another port: another origin
        ({"Origin": "https://127.0.0.1:8080"}, "foreign_origin"),
        ({"Origin": "http://localhost:8080"}, "foreign_origin"),
        ({"Origin": "null"}, "foreign_origin"),  # a sandboxed frame or a data: page
        (
            {"Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.1:8080"},
            "sec_fetch_site_cross_site",
        ),
    ],
)
def test_writes_from_another_site_are_recognised(
    headers: dict[str, str], reason: str | None
) -> None:
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert cross_site_reason(method, headers, *OWN) == reason


def test_an_origin_matches_a_host_written_without_its_default_port() -> None:
    assert cross_site_reason("POST", {"Origin": "http://box.lan"}, "http", "box.lan:80") is None
    assert cross_site_reason("POST", {"Origin": "http://[::1]:8080"}, "http", "[::1]:8080") is None
    assert cross_site_reason("POST", {"Origin": "http://x"}, "http", None) == "foreign_origin"
