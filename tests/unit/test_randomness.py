from eth_utils.address import to_checksum_address

from rfqkit.wallets import DEPLOYER, demo_wallet, derive_wallet
from simulator.randomness import RandomSource, secret_token


def test_same_seed_same_ids_and_forks_are_independent() -> None:
    a, b = RandomSource(7), RandomSource(7)
    assert [a.new_id("rfq") for _ in range(3)] == [b.new_id("rfq") for _ in range(3)]
    assert RandomSource(8).new_id("rfq") != RandomSource(7).new_id("rfq")
    fork_a = RandomSource(7).fork("makers")
    source = RandomSource(7)
    source.hex(16)  # draws on the parent do not move the fork
    assert source.fork("makers").hex(8) == fork_a.hex(8)


def test_instances_of_one_venue_draw_apart_and_the_first_draws_the_seeds_own() -> None:
    first, second = RandomSource(7, instance=0), RandomSource(7, instance=1)
    assert first.new_id("rfq") == RandomSource(7).new_id("rfq")
    assert first.fork("rfq").hex(8) == RandomSource(7).fork("rfq").hex(8)
    ids = {RandomSource(7, n).fork("rfq").new_id("rfq") for n in range(4)}
    assert len(ids) == 4
    assert second.new_id("rfq") == RandomSource(7, instance=1).new_id("rfq")  # still seeded


def test_secrets_are_not_seeded() -> None:
    assert secret_token("rfqc_") != secret_token("rfqc_")
    assert len(secret_token("rfqc_")) > 40


def test_wallets_are_deterministic() -> None:
    assert derive_wallet("deployer") == DEPLOYER
    assert demo_wallet(0).address != demo_wallet(1).address
    assert to_checksum_address(DEPLOYER.address) == DEPLOYER.address
