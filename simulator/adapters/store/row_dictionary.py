"""A preset dictionary for the history file's compressed rows (history_writer.py `compress_row`,
`expand_row`): zlib finds in it the JSON keys and the constant values every row
repeats (a maker frame compressed alone is about 370 bytes, with this about 150; docs/performance.md
"Journal rows built in the writer process"). Typical rows of a firm-quote run (seed 0), secrets
already redacted: a request journal row and maker frames, the commonest last (zlib reaches the
nearest bytes most cheaply). Changing it changes the file's format (history_schema.py
`SCHEMA_VERSION`): a row is read with the dictionary it was written with."""

from __future__ import annotations

SAMPLES = (
    (
        '{"query": "", "request_type": "application/json", "request_body": "{\\"ch'
        'ainId\\": 97, \\"sellToken\\": \\"0x15B7e9B593E7332284070494F55FCD4dDe8c78BF'
        '\\", \\"buyToken\\": \\"0x9C57A9e11C470e06469Cb33AD7f23e925B3C8d36\\", \\"sell'
        'Amount\\": \\"100000000000000000\\", \\"taker\\": \\"0x8783bAE13De8e1e8DE37B44'
        '4e4c50631ae45266C\\"}", "request_size": 223, "request_headers": [["Host",'
        ' "127.0.0.1:32973"], ["Accept", "*/*"], ["Accept-Encoding", "gzip, defla'
        'te, br"], ["User-Agent", "Python/3.11 aiohttp/3.14.5"], ["Content-Length'
        '", "223"], ["Content-Type", "application/json"]], "response_body": "{\\"d'
        'ata\\":{\\"rfqId\\":\\"rfq_4fd9d1e75d0f2fc27547c06c\\",\\"claimToken\\":\\"rfqc_'
        '<redacted>\\",\\"status\\":\\"quoted\\",\\"quote\\":{\\"sellAmount\\":\\"100000000'
        '000000000\\",\\"buyAmount\\":\\"159856070\\",\\"feeAmount\\":\\"49975012493753\\"'
        ',\\"takerPays\\":\\"100000000000000000\\",\\"rateRay\\":\\"15985607000000000000'
        '00000000000\\",\\"expiresAt\\":\\"2026-11-29T06:52:51.469Z\\",\\"orderDeadline'
        '\\":\\"2026-11-29T06:53:52.000Z\\",\\"latestOrderDeadline\\":\\"2026-11-29T06:'
        '53:52.000Z\\",\\"reactor\\":\\"0x80B7fD096fbF554cA61CBB980CeA0E98a1a936dD\\",'
        '\\"spender\\":\\"0x80B7fD096fbF554cA61CBB980CeA0E98a1a936dD\\",\\"taker\\":\\"0'
        'x8783bAE13De8e1e8DE37B444e4c50631ae45266C\\",\\"encodedOrder\\":\\"0x<redact'
        'ed>\\",\\"signature\\":\\"0x<redacted>\\",\\"orders\\":[{\\"encodedOrder\\":\\"0x<'
        'redacted>\\",\\"signature\\":\\"0x<redacted>\\",\\"sellAmount\\":\\"100000000000'
        '000000\\",\\"buyAmount\\":\\"159856070\\",\\"feeAmount\\":\\"49975012493753\\",\\"'
        'maker\\":\\"0x9946225Dcfd89e3B8F944824D018f83241E3fAfb\\"}]},\\"transactions'
        '\\":{\\"approval\\":{\\"to\\":\\"0x15B7e9B593E7332284070494F55FCD4dDe8c78BF\\",'
        '\\"data\\":\\"0x<redacted>\\",\\"value\\":\\"0\\",\\"chainId\\":97},\\"swap\\":{\\"to'
        '\\":\\"0x80B7fD096fbF554cA61CBB980CeA0E98a1a936dD\\",\\"data\\":\\"0x<redacted'
        '>\\",\\"value\\":\\"0\\",\\"chainId\\":97}},\\"routing\\":{\\"preferenceApplied\\":'
        'false,\\"restrictionApplied\\":false,\\"fallbackUsed\\":false,\\"targetMakerW'
        'allets\\":[],\\"preferredQuotesReceived\\":0,\\"openMarketQuotesReceived\\":4'
        '}}}", "response_size": 4042, "response_headers": [["Content-Type", "appl'
        'ication/json"], ["Content-Length", "4042"], ["Date", "Sun, 29 Nov 2026 0'
        '6:51:51 GMT"], ["Server", "Python/3.11 aiohttp/3.14.5"], ["X-Request-Id"'
        ', "req_f8e5d3fe9826688f17107262"], ["Server-Timing", "sim;dur=71.619, ma'
        'kers;dur=35.059"], ["X-RateLimit-Limit", "1000000"], ["X-RateLimit-Remai'
        'ning", "999898"], ["X-RateLimit-Reset", "59"]]}'
    ),
    (
        '["tx_live_0c961b90bfdc", "0xE3C60CbdF28c508986D8B1694561056214747d98", "'
        '{\\"type\\":\\"pong\\",\\"id\\":4}"]'
    ),
    (
        '["tx_test_6143027e13cd", "0xE3C60CbdF28c508986D8B1694561056214747d98", "'
        '{\\"type\\":\\"ping\\",\\"id\\":4}"]'
    ),
    (
        '["tx_live_3b8689383ecc", "0x9946225Dcfd89e3B8F944824D018f83241E3fAfb", "'
        '{\\"type\\":\\"levels\\",\\"chainId\\":56,\\"sellToken\\":\\"0x15B7e9B593E7332284'
        '070494F55FCD4dDe8c78BF\\",\\"buyToken\\":\\"0x38201092BbF7B46f37a5A853fa44c4'
        '788B0109C2\\",\\"levels\\":[{\\"sellAmount\\":\\"524288000000000000000000\\",\\"'
        'buyAmount\\":\\"873005678155093333333\\"},{\\"sellAmount\\":\\"104857600000000'
        '0000000000\\",\\"buyAmount\\":\\"1745095096620373333333\\"},{\\"sellAmount\\":\\'
        '"2097152000000000000000000\\",\\"buyAmount\\":\\"3486525154481493333333\\"},{'
        '\\"sellAmount\\":\\"4194304000000000000000000\\",\\"buyAmount\\":\\"69583901539'
        '25973333333\\"},{\\"sellAmount\\":\\"8388608000000000000000000\\",\\"buyAmount'
        '\\":\\"13858139687703893333333\\"},{\\"sellAmount\\":\\"1677721600000000000000'
        '0000\\",\\"buyAmount\\":\\"27481716894815573333333\\"},{\\"sellAmount\\":\\"3355'
        '4432000000000000000000\\",\\"buyAmount\\":\\"54025183867262293333333\\"},{\\"s'
        'ellAmount\\":\\"67108864000000000000000000\\",\\"buyAmount\\":\\"1042973680450'
        '49173333333\\"},{\\"sellAmount\\":\\"100000000000000000000000000\\",\\"buyAmou'
        'nt\\":\\"149933333333333333333333\\"}]}"]'
    ),
    (
        '["tx_test_8dac274fc91c", "0x9946225Dcfd89e3B8F944824D018f83241E3fAfb", "'
        '{\\"type\\":\\"expired\\",\\"quoteId\\":\\"mq_4155e88734eef1bc0f7b\\",\\"rfqId\\":'
        '\\"rfq_d954000e8c6934c11ab0eafb\\"}"]'
    ),
    (
        '["tx_test_6143027e13cd", "0xE3C60CbdF28c508986D8B1694561056214747d98", "'
        '{\\"type\\":\\"released\\",\\"quoteId\\":\\"mq_add81ce67aedf5f733d1\\",\\"rfqId\\"'
        ':\\"rfq_4fd9d1e75d0f2fc27547c06c\\",\\"reason\\":\\"not_selected\\"}"]'
    ),
    (
        '["tx_test_6143027e13cd", "0xE3C60CbdF28c508986D8B1694561056214747d98", "'
        '{\\"type\\":\\"rfq\\",\\"quoteId\\":\\"mq_add81ce67aedf5f733d1\\",\\"rfqId\\":\\"rf'
        'q_4fd9d1e75d0f2fc27547c06c\\",\\"chainId\\":97,\\"sellToken\\":\\"0x15B7e9B593'
        'E7332284070494F55FCD4dDe8c78BF\\",\\"buyToken\\":\\"0x9C57A9e11C470e06469Cb3'
        '3AD7f23e925B3C8d36\\",\\"kind\\":\\"exact_input\\",\\"makerReceives\\":\\"999500'
        '24987506247\\",\\"feeAmount\\":\\"49975012493753\\",\\"makerGives\\":null,\\"fee'
        'Bps\\":5,\\"taker\\":\\"0x8783bAE13De8e1e8DE37B444e4c50631ae45266C\\",\\"react'
        'or\\":\\"0x80B7fD096fbF554cA61CBB980CeA0E98a1a936dD\\",\\"signatureTransfer\\'
        '":\\"0x01a48392bD075CaAe16a241A9af3B5226CB0C75D\\",\\"replyByMs\\":179593511'
        '2204,\\"minExpiresAtMs\\":1795935117220,\\"maxExpiresAtMs\\":1795935171469}"'
        "]"
    ),
    (
        '["tx_test_6143027e13cd", "0xE3C60CbdF28c508986D8B1694561056214747d98", "'
        '{\\"type\\":\\"quote\\",\\"quoteId\\":\\"mq_add81ce67aedf5f733d1\\",\\"expiresAtM'
        's\\":1795935171469,\\"order\\":{\\"reactor\\":\\"0x80B7fD096fbF554cA61CBB980Ce'
        'A0E98a1a936dD\\",\\"maker\\":\\"0xE3C60CbdF28c508986D8B1694561056214747d98\\"'
        ',\\"taker\\":\\"0x8783bAE13De8e1e8DE37B444e4c50631ae45266C\\",\\"inputToken\\"'
        ':\\"0x9C57A9e11C470e06469Cb33AD7f23e925B3C8d36\\",\\"inputAmount\\":\\"159760'
        '118\\",\\"outputToken\\":\\"0x15B7e9B593E7332284070494F55FCD4dDe8c78BF\\",\\"o'
        'utputAmount\\":\\"99950024987506247\\",\\"feeAmount\\":\\"49975012493753\\",\\"n'
        'once\\":\\"268212821767098557400837916563641633416746804290545496453872392'
        '691973965948\\",\\"deadline\\":\\"1795935232\\"},\\"signature\\":\\"0x<redacted>'
        '\\"}"]'
    ),
)
ROW_DICTIONARY = "".join(SAMPLES).encode()
