import pytest

from rfqkit.wallets import maker_wallet
from simulator.clock import Clock
from simulator.errors import InvalidRequest
from simulator.randomness import RandomSource
from simulator.services.access.keys import (
    QA_MAKER_WALLET,
    InvalidApiKey,
    KeyService,
    create_demo_keys,
    create_qa_keys,
    create_qa_maker_key,
)


def keys() -> KeyService:
    return KeyService(Clock(), RandomSource(1))


def test_full_key_authenticates_and_only_a_hash_is_kept() -> None:
    service = keys()
    partner = service.create_partner("p")
    key, full = service.create_key(
        partner_id=partner.partner_id, environment="live", scopes=frozenset({"trades:read"})
    )
    assert full.startswith("tx_live_")
    prefix, secret = full.split(".")
    assert prefix == key.key_id
    assert secret not in repr(key)
    assert service.authenticate(full) is key


@pytest.mark.parametrize("status", ["suspended", "revoked"])
def test_inactive_keys_are_refused_like_unknown_ones(status: str) -> None:
    service = keys()
    partner = service.create_partner("p")
    key, full = service.create_key(
        partner_id=partner.partner_id, environment="test", scopes=frozenset({"trades:read"})
    )
    service.set_status(key.key_id, status)  # type: ignore[arg-type]
    with pytest.raises(InvalidApiKey):
        service.authenticate(full)


@pytest.mark.parametrize(
    "presented",
    [
        "",
        "tx_live_",
        "tx_live_abc.def",
        "tx_prod_0123456789ab." + "a" * 43,
        "tx_live_0123456789ab." + "a" * 43,
    ],
)
def test_malformed_and_unknown_keys(presented: str) -> None:
    with pytest.raises(InvalidApiKey):
        keys().authenticate(presented)


def test_wrong_secret_for_a_known_prefix() -> None:
    service = keys()
    partner = service.create_partner("p")
    key, _full = service.create_key(
        partner_id=partner.partner_id, environment="live", scopes=frozenset({"trades:read"})
    )
    with pytest.raises(InvalidApiKey):
        service.authenticate(key.key_id + "." + "x" * 43)


def test_maker_credentials_carry_only_maker_scopes_and_a_wallet() -> None:
    service = keys()
    partner = service.create_partner("m")
    with pytest.raises(InvalidRequest):
        service.create_key(
            partner_id=partner.partner_id,
            environment="live",
            scopes=frozenset({"maker:stream", "trades:read"}),
            maker_wallet="0x" + "1" * 40,
        )
    with pytest.raises(InvalidRequest):
        service.create_key(
            partner_id=partner.partner_id, environment="live", scopes=frozenset({"maker:stream"})
        )
    key, _ = service.create_key(
        partner_id=partner.partner_id,
        environment="live",
        scopes=frozenset({"maker:stream"}),
        maker_wallet="0x" + "1" * 40,
    )
    assert key.is_maker_credential


def test_revoked_stays_revoked_and_demo_keys() -> None:
    service = keys()
    created = create_demo_keys(service, seed=0)
    assert [label for label, _, _ in created] == ["taker-live", "taker-test", "aggregator-live"]
    key = created[0][1]
    service.set_status(key.key_id, "revoked")
    with pytest.raises(InvalidRequest):
        service.set_status(key.key_id, "active")


def test_demo_keys_are_the_same_under_the_same_seed_and_other_keys_are_not() -> None:
    first = [full for _, _, full in create_demo_keys(keys(), seed=7)]
    again = [full for _, _, full in create_demo_keys(keys(), seed=7)]
    other_seed = [full for _, _, full in create_demo_keys(keys(), seed=8)]
    assert first == again
    assert set(first).isdisjoint(other_seed)
    service = keys()
    for _, record, full in create_demo_keys(service, seed=7):
        assert service.authenticate(full) is record
    # A key created at run time still takes its secret from the CSPRNG: two services with the
    # same seed hand out different secrets.
    made = []
    for _ in range(2):
        service = keys()
        partner = service.create_partner("p")
        made.append(
            service.create_key(
                partner_id=partner.partner_id, environment="test", scopes=frozenset({"trades:read"})
            )[1]
        )
    assert made[0].split(".")[1] != made[1].split(".")[1]


def test_the_qa_maker_credential_is_seeded_and_no_fleet_makers() -> None:
    service = keys()
    label, record, full = create_qa_maker_key(service, seed=7)
    assert label == "maker-test"
    assert record.is_maker_credential
    assert record.scopes == frozenset({"maker:stream"})
    assert record.environment == "test"
    assert service.authenticate(full) is record
    assert full == create_qa_maker_key(keys(), seed=7)[2]
    assert full != create_qa_maker_key(keys(), seed=8)[2]
    # Its wallet is none of the simulated makers' (nor a demo key's partner).
    assert QA_MAKER_WALLET not in {maker_wallet(i).address for i in range(32)}
    assert service.partners[record.partner_id].name == "qa"
    # Resumed from a state directory: the same record, not a duplicate.
    assert create_qa_maker_key(service, seed=7)[1] is record


def test_qa_keys_have_exact_scopes_a_second_partner_and_repeat_under_the_seed() -> None:
    service = keys()
    demo = create_demo_keys(service, seed=7)
    qa = create_qa_keys(service, seed=7)
    assert [full for _, _, full in create_qa_keys(keys(), seed=7)] == [f for _, _, f in qa]
    assert {f for _, _, f in qa}.isdisjoint(f for _, _, f in demo)
    partner = {label: service.partners[key.partner_id].name for label, key, _ in qa}
    assert partner == {
        "qa-trades-write": "demo",
        "qa-trades-read": "demo",
        "qa-webhooks-manage": "demo",
        "qa-trader": "demo",
        "qa-other-trader": "demo-other",
        "qa-other-webhooks": "demo-other",
        "qa-spendable": "demo",
        "qa-aggregator": "demo",
    }
    assert service.partners[demo[0][1].partner_id].name == "demo"  # one partner, not two
    scopes = {label: key.scopes for label, key, _ in qa}
    assert scopes["qa-trades-write"] == {"trades:write"}
    assert scopes["qa-trades-read"] == {"trades:read"}
    assert scopes["qa-webhooks-manage"] == scopes["qa-other-webhooks"] == {"webhooks:manage"}
    assert scopes["qa-trader"] == scopes["qa-other-trader"] == {"trades:write", "trades:read"}
    assert scopes["qa-spendable"] == {"quotes:read"}
    assert scopes["qa-aggregator"] == {"rfq:aggregator", "trades:write", "trades:read"}
    for _, key, full in qa:
        assert key.environment == "test"
        assert service.authenticate(full) is key
    # Made again on a resumed state: the same keys, nothing duplicated.
    assert [k for _, k, _ in create_qa_keys(service, seed=7)] == [k for _, k, _ in qa]
