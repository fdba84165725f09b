from pathlib import Path

import pytest
from pydantic import ValidationError

from simulator.settings import load_settings


def test_defaults_have_both_chains_and_spec_timing() -> None:
    settings = load_settings()
    assert [(c.chain_id, c.environment) for c in settings.chains] == [(56, "live"), (97, "test")]
    timing = settings.corridor_defaults
    assert (timing.reply_budget_ms, timing.quote_ttl_s, timing.preferred_wait_ms) == (750, 60, 250)
    assert settings.limits.ip_backstop_per_minute == 600
    assert (settings.limits.outstanding_default, settings.limits.outstanding_aggregator) == (4, 32)
    book = [c for c in settings.chains[0].corridors if c.mode == "BOOK"]
    assert book, "a BOOK-mode corridor exists to exercise the 400 for BOOK corridors"


def test_corridor_overrides_only_what_it_sets(tmp_path: Path) -> None:
    config = tmp_path / "s.yaml"
    config.write_text(
        "corridor_defaults: {fee_bps: 7}\n"
        "chains:\n"
        "  - chain_id: 97\n"
        "    environment: test\n"
        "    name: t\n"
        "    min_size: '0.01'\n"
        "    tokens: [{symbol: AAA, name: A, decimals: 6}, {symbol: BBB, name: B, decimals: 18}]\n"
        "    corridors: [{base: AAA, quote: BBB, reply_budget_ms: 300}]\n"
    )
    settings = load_settings(config)
    corridor = settings.chain(97).corridors[0].timing(settings.corridor_defaults)
    assert (corridor.reply_budget_ms, corridor.fee_bps, corridor.quote_ttl_s) == (300, 7, 60)


def test_corridor_with_unknown_token_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "s.yaml"
    config.write_text(
        "chains:\n"
        "  - {chain_id: 97, environment: test, name: t, min_size: '1',\n"
        "     tokens: [{symbol: AAA, name: A, decimals: 6}],\n"
        "     corridors: [{base: AAA, quote: ZZZ}]}\n"
    )
    with pytest.raises(ValidationError, match="unknown token ZZZ"):
        load_settings(config)


def test_quote_ttl_cannot_exceed_the_spec_cap() -> None:
    with pytest.raises(ValidationError):
        load_settings(overrides={"corridor_defaults": {"quote_ttl_s": 61}})


def test_a_testnet_without_contracts_is_listed_apart_from_the_chains() -> None:
    settings = load_settings()
    assert [(c.chain_id, c.environment) for c in settings.chains_without_contracts] == [
        (11155111, "test")
    ]
    assert 11155111 not in {c.chain_id for c in settings.chains}
    assert (settings.idempotency.ttl_s, settings.idempotency.max_records) == (86_400, 100_000)


def test_a_chain_id_cannot_be_both_deployed_and_without_contracts() -> None:
    with pytest.raises(ValidationError, match="duplicate chain_id"):
        load_settings(
            overrides={
                "chains_without_contracts": [{"chain_id": 97, "environment": "test", "name": "x"}]
            }
        )
