from __future__ import annotations

import pytest

from provider_sandbox import banks


def test_resolution_is_deterministic_per_account_number() -> None:
    first = banks.resolve_account("058", "0123456789")
    assert banks.resolve_account("044", "0123456789") == first  # the number alone decides
    assert banks.resolve_account("058", "0123456789") == first
    assert first == first.upper()
    assert len(first.split()) == 2
    names = {banks.resolve_account("058", f"01234567{n:02d}") for n in range(1, 30)}
    assert len(names) > 20  # different numbers, (almost always) different people


def test_resolution_interleaved_with_other_calls_is_stable() -> None:
    a = banks.resolve_account("058", "2222222222")
    banks.resolve_account("058", "3333333333")
    assert banks.resolve_account("058", "2222222222") == a


def test_numbers_ending_in_0000_are_refused() -> None:
    with pytest.raises(banks.AccountNotVerified, match="We could not verify this bank account"):
        banks.resolve_account("058", "1234560000")


def test_unknown_bank_code() -> None:
    with pytest.raises(banks.UnknownBank):
        banks.resolve_account("999", "0123456789")


def test_bank_list_is_about_twenty_unique_codes() -> None:
    codes = [code for code, _ in banks.BANKS]
    assert 18 <= len(codes) <= 25
    assert len(set(codes)) == len(codes)
    assert ("058", "Guaranty Trust Bank") in banks.BANKS


def test_name_match_ignores_case_and_spacing() -> None:
    assert banks.same_name("ADA  OBI", "ada obi")
    assert not banks.same_name("ADA OBI", "ADA OBIE")
