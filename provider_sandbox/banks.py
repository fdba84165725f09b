"""The bank list, account resolution and the documented test values for it.

Resolved names come from faker's Nigerian English locale seeded by the account number, so the
same number always resolves to the same name (on every machine, whatever the sandbox seed)."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faker import Faker

# Central Bank of Nigeria sort-code prefixes of commercial banks (the real codes, so an
# integrator's own bank picker data works against the sandbox).
BANKS: tuple[tuple[str, str], ...] = (
    ("044", "Access Bank"),
    ("023", "Citibank Nigeria"),
    ("050", "Ecobank Nigeria"),
    ("070", "Fidelity Bank"),
    ("011", "First Bank of Nigeria"),
    ("214", "First City Monument Bank"),
    ("058", "Guaranty Trust Bank"),
    ("030", "Heritage Bank"),
    ("301", "Jaiz Bank"),
    ("082", "Keystone Bank"),
    ("526", "Parallex Bank"),
    ("076", "Polaris Bank"),
    ("101", "Providus Bank"),
    ("221", "Stanbic IBTC Bank"),
    ("068", "Standard Chartered Bank"),
    ("232", "Sterling Bank"),
    ("100", "Suntrust Bank"),
    ("032", "Union Bank of Nigeria"),
    ("033", "United Bank for Africa"),
    ("215", "Unity Bank"),
    ("035", "Wema Bank"),
    ("057", "Zenith Bank"),
)
BANK_NAMES = dict(BANKS)
TEMPORARY_ACCOUNT_BANK = "Providus Bank"  # virtual collection accounts live at this bank
ACCOUNT_NUMBER = re.compile(r"^[0-9]{6,12}$")
UNVERIFIABLE_SUFFIX = "0000"  # test value: such numbers never resolve
UNVERIFIABLE_MESSAGE = "We could not verify this bank account"


class AccountNotVerified(Exception):
    """The provider declines to resolve this account (422 refused)."""


class UnknownBank(Exception):
    """The bank code is not on the list (404 not_found)."""


@cache
def _faker() -> Faker:
    """One instance, made on first use (creating one costs ~20 ms; it is reseeded on every use).
    Imported lazily: faker is slow to import, and it ships a pytest plugin that pytest must load
    before anyone imports faker (an earlier import is a PytestAssertRewriteWarning, an error
    under `filterwarnings = error`, whenever the simulator's CLI runs the conformance suite)."""
    from faker import Faker

    return Faker("en_NG")


def bank_name(code: str) -> str:
    try:
        return BANK_NAMES[code]
    except KeyError:
        raise UnknownBank(f"Unknown bank code {code}") from None


def resolve_account(bank_code: str, account_number: str) -> str:
    """The account holder's name, upper case as Nigerian banks return it. The caller has
    checked the number's format (6-12 ASCII digits)."""
    bank_name(bank_code)
    if account_number.endswith(UNVERIFIABLE_SUFFIX):
        raise AccountNotVerified(UNVERIFIABLE_MESSAGE)
    faker = _faker()
    faker.seed_instance(int(account_number))
    return f"{faker.first_name()} {faker.last_name()}".upper()


def same_name(a: str, b: str) -> bool:
    """Banks' name checks ignore case and spacing."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()
