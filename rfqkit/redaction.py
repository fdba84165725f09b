"""Secrets never reach a log line: API keys keep only their public prefix (spec 1-rfq-v2 "API
keys": only the prefix is safe to log), claim tokens, webhook signing secrets, provider API keys
and signatures are replaced, and so is the value of any credential header quoted in a message
or a traceback (aiohttp's parser errors quote the raw header line).

`RedactingFormatter` applies `redact` to the whole formatted record (message, traceback, stack),
so a secret inside an exception's text is caught too; `install_redaction()` puts it on every
handler of the root logger (the command lines call it after `logging.basicConfig`)."""

from __future__ import annotations

import logging
import re

REDACTED = "<redacted>"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # A credential header's value, as a raw header line, a dict repr or `name=value`.
    (
        re.compile(
            r"(?i)\b((?:authorization|x-api-key|x-rfq-claim|x-ramp-claim|x-provider-signature"
            r"|service-signature)['\"]?\s*[:=]\s*['\"]?)"
            r"(?:bearer\s+)?[^\s'\",;}\\]+"
        ),
        rf"\1{REDACTED}",
    ),
    # API keys `<env>_<live|test>_<public prefix>.<secret>`: the prefix stays (it is public).
    (
        re.compile(r"\b([a-z]{2,8}_(?:live|test)_[0-9A-Za-z]{4,64})\.[A-Za-z0-9_-]+"),
        rf"\1.{REDACTED}",
    ),
    # Claim tokens (RFQ, ramp), webhook signing secrets, provider API keys.
    (re.compile(r"\b(rfqc_|rcl_|whsec_|sk_)[A-Za-z0-9_-]+"), rf"\1{REDACTED}"),
    # Signatures (proofs of control, maker orders): 65 bytes of hex or more; hashes (32 bytes)
    # and addresses (20) stay readable.
    (re.compile(r"\b0x[0-9a-fA-F]{130,}"), "0x" + REDACTED),
    # Webhook signature header values `t=...,v1=<hex>`.
    (re.compile(r"\b(v1=)[0-9a-fA-F]{16,}"), rf"\1{REDACTED}"),
)


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFormatter(logging.Formatter):
    """A formatter whose every output line went through `redact`."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def install_redaction(logger: logging.Logger | None = None) -> None:
    """Swap each handler's formatter for a redacting one with the same format."""
    for handler in (logger or logging.getLogger()).handlers:
        current = handler.formatter
        if isinstance(current, RedactingFormatter):
            continue
        formatter = RedactingFormatter(
            current._fmt if current is not None else None,
            current.datefmt if current is not None else None,
        )
        handler.setFormatter(formatter)
