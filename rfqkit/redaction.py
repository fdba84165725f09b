"""Secrets never reach a log line: API keys keep only their public prefix (spec 1-rfq-v2 "API
keys": only the prefix is safe to log), claim tokens, webhook signing secrets, provider API keys
and signatures are replaced, and so is the value of any credential header quoted in a message
or a traceback (aiohttp's parser errors quote the raw header line).

Patterns only catch secrets of the spec's shape. A `Redactor` also goes by NAME, whatever the
value looks like (a claim token without `rfqc_` is still a claim token): the values of secret
headers (`SECRET_HEADERS` and any named by the caller) and of secret JSON fields
(`SECRET_FIELDS`: claimToken, signingSecret, proofs' signatures, ...), in structured data, in
JSON or `name=value` text, and, once seen in an exchange, wherever else that value is quoted.

`RedactingFormatter` applies `redact` (or a Redactor) to the whole formatted record (message,
traceback, stack), so a secret inside an exception's text is caught too; `install_redaction()`
puts it on every handler of the root logger (the command lines call it after
`logging.basicConfig`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

REDACTED = "<redacted>"
# Headers whose values are credentials (spec 1 "Authentication", claims, webhook and provider
# signatures, cookies).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-rfq-claim",
        "x-ramp-claim",
        "x-provider-signature",
        "service-signature",
        "cookie",
        "set-cookie",
    }
)
# JSON fields whose values are secrets: the spec's claimToken and signingSecret, the signature of
# a proof of control (takerProof / proof) or of a signed order, the full API key /_sim/keys
# returns once (`key`), a webhook or provider secret, a wallet's private key.
SECRET_FIELDS = frozenset(
    {
        "claimToken",
        "claim_token",
        "signingSecret",
        "signing_secret",
        "signature",
        "secret",
        "webhookSecret",
        "webhook_secret",
        "apiKey",
        "api_key",
        "privateKey",
        "private_key",
        "key",
    }
)
# In free text `key` is too common a word (Idempotency-Key, "key tx_test_..."): only as a JSON
# field; the full key's value is caught by its shape and, once seen, by its value.
_TEXT_FIELDS = sorted(SECRET_FIELDS - {"key"}, key=len, reverse=True)
KNOWN_VALUE_MIN = 6  # a seen secret shorter than this is not searched for in free text

# The credential headers whose values a raw header line, a dict repr or `name=value` quotes.
_QUOTED_HEADERS = (
    "authorization",
    "x-api-key",
    "x-rfq-claim",
    "x-ramp-claim",
    "x-provider-signature",
    "service-signature",
)


class SecretShape(NamedTuple):
    """A secret's shape. `needles`: text the pattern cannot match without holding one of them
    (compared lowercased when `folded`), so most text costs a few substring searches, not a
    regular expression tried at every position (a maker frame or a firm quote's answer is
    redacted for the history file at hundreds a second). A word boundary before a literal is
    spelled as a look-behind after it (`rfqc_(?<!\\wrfqc_)` for `\\brfqc_`), so the search
    starts from the literal."""

    needles: tuple[str, ...]
    folded: bool
    pattern: re.Pattern[str]
    replacement: str

    def may_match(self, text: str) -> bool:
        if self.folded:
            if not text.isascii():  # a case-insensitive match need not survive str.lower()
                return True
            text = text.lower()
        return any(needle in text for needle in self.needles)


SECRET_SHAPES: tuple[SecretShape, ...] = (
    # A credential header's value, as a raw header line, a dict repr or `name=value`.
    SecretShape(
        _QUOTED_HEADERS,
        True,
        re.compile(
            rf"(?i)\b((?:{'|'.join(re.escape(h) for h in _QUOTED_HEADERS)})['\"]?\s*[:=]\s*['\"]?)"
            r"(?:bearer\s+)?[^\s'\",;}\\]+"
        ),
        rf"\1{REDACTED}",
    ),
    # API keys `<env>_<live|test>_<public prefix>.<secret>`: the prefix stays (it is public).
    SecretShape(
        ("_live_", "_test_"),
        False,
        re.compile(r"\b([a-z]{2,8}_(?:live|test)_[0-9A-Za-z]{4,64})\.[A-Za-z0-9_-]+"),
        rf"\1.{REDACTED}",
    ),
    # Claim tokens (RFQ, ramp), webhook signing secrets, provider API keys.
    SecretShape(
        ("rfqc_", "rcl_", "whsec_", "sk_"),
        False,
        re.compile(
            r"(rfqc_|rcl_|whsec_|sk_)(?<!\wrfqc_)(?<!\wrcl_)(?<!\wwhsec_)(?<!\wsk_)[A-Za-z0-9_-]+"
        ),
        rf"\1{REDACTED}",
    ),
    # Signatures (proofs of control, maker orders): 65 bytes of hex or more; hashes (32 bytes)
    # and addresses (20) stay readable.
    SecretShape(("0x",), False, re.compile(r"0x(?<!\w0x)[0-9a-fA-F]{130,}"), "0x" + REDACTED),
    # Webhook signature header values `t=...,v1=<hex>`.
    SecretShape(("v1=",), False, re.compile(r"(v1=)(?<!\wv1=)[0-9a-fA-F]{16,}"), rf"\1{REDACTED}"),
)


def redact(text: str) -> str:
    for rule in SECRET_SHAPES:
        if rule.may_match(text):
            text = rule.pattern.sub(rule.replacement, text)
    return text


def _named_value(names: Iterable[str]) -> re.Pattern[str]:
    """`name: value`, `"name": "value"`, `'name': 'value'`, `name=value`: group 1 is everything
    up to the value; the value is a quoted string (perhaps cut short) or a bare word."""
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(
        rf"""(?i)((?<![\w-])["']?(?:{alternatives})["']?\s*[:=]\s*)"""
        r"""("[^"]*"?|'[^']*'?|(?:bearer\s+)?[^\s"',;}\]&\\]+)"""
    )


def _replace_value(match: re.Match[str]) -> str:
    value = match.group(2)
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group(1)}{quote}{REDACTED}{quote}"


_FIELD_TEXT = _named_value(_TEXT_FIELDS)


class Redactor:
    """Redaction by name as well as by shape. ``headers``: more header names whose values are
    secrets (the proxy's ``--redact-header``)."""

    def __init__(self, headers: Iterable[str] = ()) -> None:
        self.headers = SECRET_HEADERS | {h.strip().lower() for h in headers if h.strip()}
        self._header_text = _named_value(sorted(self.headers, key=len, reverse=True))

    def is_secret_header(self, name: str) -> bool:
        return name.lower() in self.headers

    def header(self, name: str, value: str) -> str:
        return REDACTED if self.is_secret_header(name) else self.text(value)

    def header_values(self, items: Iterable[tuple[str, str]]) -> set[str]:
        """The secret values among these headers (a Bearer credential without its scheme)."""
        found: set[str] = set()
        for name, value in items:
            if self.is_secret_header(name):
                found.add(value.strip())
                scheme, _, credential = value.strip().partition(" ")
                if credential and scheme.lower() == "bearer":
                    found.add(credential.strip())
        return found

    @staticmethod
    def field_values(value: Any) -> set[str]:
        """The values of secret fields anywhere in parsed JSON (objects, arrays, nested)."""
        found: set[str] = set()
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for name, inner in item.items():
                    if name in SECRET_FIELDS and isinstance(inner, (str, int, float)):
                        found.add(str(inner))
                    else:
                        stack.append(inner)
            elif isinstance(item, list):
                stack.extend(item)
        return found

    def json(self, value: Any) -> Any:
        """A copy of parsed JSON with every secret field's value replaced."""
        if isinstance(value, dict):
            return {
                k: REDACTED if k in SECRET_FIELDS and v is not None else self.json(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value

    def text(self, text: str, known: Iterable[str] = ()) -> str:
        """Free text: the ``known`` secret values wherever they appear, then secret fields and
        headers by name, then secrets by shape."""
        for secret in sorted(known, key=len, reverse=True):
            if len(secret) >= KNOWN_VALUE_MIN:
                text = text.replace(secret, REDACTED)
        text = _FIELD_TEXT.sub(_replace_value, text)
        text = self._header_text.sub(_replace_value, text)
        return redact(text)


class RedactingFormatter(logging.Formatter):
    """A formatter whose every output line went through `redact` (or the given Redactor)."""

    def __init__(self, *args: Any, redactor: Redactor | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        return self.redactor.text(line) if self.redactor is not None else redact(line)


def install_redaction(
    logger: logging.Logger | None = None, redactor: Redactor | None = None
) -> None:
    """Swap each handler's formatter for a redacting one with the same format (again when a
    Redactor with more header names is given)."""
    for handler in (logger or logging.getLogger()).handlers:
        current = handler.formatter
        if isinstance(current, RedactingFormatter) and redactor is None:
            continue
        formatter = RedactingFormatter(
            current._fmt if current is not None else None,
            current.datefmt if current is not None else None,
            redactor=redactor,
        )
        handler.setFormatter(formatter)
