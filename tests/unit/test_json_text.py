"""rfqkit.json_text reads and writes what the json module does (the firm path's frames and
JSON-RPC bodies go through it), errors included."""

from __future__ import annotations

import json

import pytest

from rfqkit import json_text

SAME = [
    '{"type":"quote","quoteId":"mq_1","order":{"nonce":"1000017"},"signature":"0xab"}',
    '[{"jsonrpc":"2.0","id":1,"result":"0x05"}]',
    '{"a":1,"a":2}',  # the last duplicate wins
    "123456789012345678901234567890123456789",
    '"\\u00e9 caf\\u00e9"',
    '"\\ud800"',  # a lone surrogate: the json module's reading
    "NaN",
    " [1, 2.5, true, null] ",
]


@pytest.mark.parametrize("text", SAME)
def test_reads_what_the_json_module_reads(text: str) -> None:
    expected = json.loads(text)
    got = json_text.loads(text)
    assert repr(got) == repr(expected)  # NaN != NaN: compare as written
    assert repr(json_text.loads(text.encode("utf-8", "surrogatepass"))) == repr(expected)


@pytest.mark.parametrize("text", ["", "[1,]", "[1] x", '"a\tb"', "{'a': 1}"])
def test_refuses_with_the_json_module_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as ours:
        json_text.loads(text)
    assert str(ours.value) == str(theirs.value)


def test_writes_compact_json_of_plain_data() -> None:
    value = {"jsonrpc": "2.0", "id": 7, "params": [{"to": "0xab", "n": 2**200}, "latest", None]}
    written = json_text.dumps(value)
    assert written == json.dumps(value, separators=(",", ":")).encode()
    assert json.loads(written) == value
