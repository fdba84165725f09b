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


def test_chain_rpc_ports_are_fixed_by_default_and_overridable_per_chain() -> None:
    settings = load_settings()
    assert [settings.anvil_port(c.chain_id) for c in settings.chains] == [8545, 8546]
    moved = load_settings(overrides={"rpc_port": 9545})
    assert [moved.anvil_port(c.chain_id) for c in moved.chains] == [9545, 9546]
    free = load_settings(overrides={"rpc_port": 0})
    assert [free.anvil_port(c.chain_id) for c in free.chains] == [0, 0]
    one = load_settings(
        overrides={
            "chains": [
                {**settings.chains[0].model_dump(mode="json"), "rpc_port": 0},
                settings.chains[1].model_dump(mode="json"),
            ]
        }
    )
    assert [one.anvil_port(c.chain_id) for c in one.chains] == [0, 8546]


def test_two_fixed_listeners_on_one_port_are_refused() -> None:
    with pytest.raises(ValidationError, match="8546"):
        load_settings(overrides={"api": {"port": 8546}})


def test_every_setting_is_read_from_rfqsim_variables_between_the_file_and_the_flags(
    tmp_path: Path,
) -> None:
    config = tmp_path / "s.yaml"
    config.write_text("seed: 1\napi: {port: 9000}\nlimits: {keyless_per_minute: 5}\n")
    environ = {
        "RFQSIM_SEED": "2",
        "RFQSIM_API__HOST": "127.0.0.2",
        "RFQSIM_LIMITS__TIERS": '{"default": 9}',
        "RFQSIM_WEBHOOKS__ALLOW_HTTP": "true",
        "RFQSIM_RPC_PORT": "0",
        "RFQSIM_API_KEY": "tx_test_not.a-setting",  # the conformance suite's, not a setting
    }
    settings = load_settings(config, overrides={"seed": 3}, environ=environ)
    assert settings.seed == 3  # a flag beats the environment
    assert settings.api.port == 9000  # the file, where the environment says nothing
    assert settings.api.host == "127.0.0.2"  # the environment beats the file and the defaults
    assert settings.limits.keyless_per_minute == 5
    assert settings.limits.tiers["default"] == 9  # mappings merge key by key, as in YAML
    assert settings.webhooks.allow_http is True
    assert settings.rpc_port == 0
    assert load_settings(config, environ=environ).seed == 2


def test_a_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(ValidationError, match=r"api\.port"):
        load_settings(environ={"RFQSIM_API__PORT": "eighty"})
    with pytest.raises(ValueError, match="limits"):
        load_settings(environ={"RFQSIM_LIMITS__TIERS": "{not json"})


def test_a_file_setting_the_retired_delivery_count_is_told_what_replaced_it(
    tmp_path: Path,
) -> None:
    config = tmp_path / "s.yaml"
    config.write_text("webhooks:\n  keep_finished: 500\n")
    with pytest.raises(ValidationError, match=r"keep_finished is retired.*keep_finished_s"):
        load_settings(config, environ={})
    config.write_text("webhooks:\n  keep_finished_s: 3600\n")
    assert load_settings(config, environ={}).webhooks.keep_finished_s == 3600
