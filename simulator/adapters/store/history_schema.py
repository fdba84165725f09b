"""The history file's tables (history_db.py): `SCHEMA` at `PRAGMA user_version`
`SCHEMA_VERSION`, and the tables that hold history (`TABLES`, what a reset's `clear` empties)."""

from __future__ import annotations

# 2: rows are zlib-compressed JSON; 3: a timeline's list item apart; 4: the request journal
# and the maker stream's frames (journal_requests, journal_frames), finished webhook
# deliveries with their attempts (webhook_deliveries); 5: the rates feed's tape (feed_trades);
# 6: rows compressed with a preset dictionary (row_dictionary.py)
SCHEMA_VERSION = 6
HISTORY_FILE = "rfqsim-history.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS rfqs (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    at_rest_since REAL NOT NULL,
    record BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS rfqs_at_rest ON rfqs (at_rest_since);
CREATE TABLE IF NOT EXISTS rfq_orders (
    order_hash BLOB PRIMARY KEY,
    rfq_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS rfq_orders_rfq ON rfq_orders (rfq_id);
CREATE TABLE IF NOT EXISTS timelines (
    topic TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at REAL NOT NULL,
    status TEXT NOT NULL,
    taker TEXT,
    pair TEXT,
    item TEXT NOT NULL,
    timeline BLOB NOT NULL,
    PRIMARY KEY (topic, id)
);
CREATE INDEX IF NOT EXISTS timelines_newest ON timelines (topic, created_at, id);
CREATE INDEX IF NOT EXISTS timelines_taker ON timelines (topic, taker, created_at, id);
CREATE INDEX IF NOT EXISTS timelines_status ON timelines (topic, status, created_at, id);
CREATE INDEX IF NOT EXISTS timelines_pair ON timelines (topic, pair, created_at, id);
CREATE INDEX IF NOT EXISTS timelines_created ON timelines (created_at);
CREATE TABLE IF NOT EXISTS timeline_makers (
    topic TEXT NOT NULL,
    maker TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (topic, maker, created_at, id)
);
CREATE INDEX IF NOT EXISTS timeline_makers_created ON timeline_makers (created_at);
CREATE TABLE IF NOT EXISTS journal_requests (
    seq INTEGER PRIMARY KEY,
    request_id TEXT NOT NULL,
    at REAL NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    key_prefix TEXT,
    rest BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_requests_at ON journal_requests (at, seq);
CREATE INDEX IF NOT EXISTS journal_requests_id ON journal_requests (request_id, at, seq);
CREATE INDEX IF NOT EXISTS journal_requests_path ON journal_requests (path, at, seq);
CREATE INDEX IF NOT EXISTS journal_requests_method ON journal_requests (method, at, seq);
CREATE INDEX IF NOT EXISTS journal_requests_status ON journal_requests (status, at, seq);
CREATE TABLE IF NOT EXISTS journal_frames (
    seq INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    maker_id TEXT NOT NULL,
    wallet TEXT NOT NULL,
    direction TEXT NOT NULL,
    rfq_id TEXT,
    frame BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_frames_at ON journal_frames (at, seq);
CREATE INDEX IF NOT EXISTS journal_frames_maker ON journal_frames (maker_id, at, seq);
CREATE INDEX IF NOT EXISTS journal_frames_wallet ON journal_frames (wallet, at, seq);
CREATE INDEX IF NOT EXISTS journal_frames_rfq ON journal_frames (rfq_id, at, seq);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    serial INTEGER NOT NULL,
    ended_at REAL NOT NULL,
    delivery BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_newest ON webhook_deliveries (created_at, serial);
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint
    ON webhook_deliveries (endpoint_id, created_at, serial);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event
    ON webhook_deliveries (event_id, created_at, serial);
CREATE INDEX IF NOT EXISTS webhook_deliveries_status
    ON webhook_deliveries (status, created_at, serial);
CREATE INDEX IF NOT EXISTS webhook_deliveries_ended ON webhook_deliveries (ended_at);
CREATE TABLE IF NOT EXISTS feed_trades (
    chain_id INTEGER NOT NULL,
    tx_hash TEXT NOT NULL,
    log_index INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    block INTEGER NOT NULL,
    ticker_id TEXT,
    side TEXT,
    base_volume TEXT,
    target_volume TEXT,
    price TEXT,
    PRIMARY KEY (chain_id, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS feed_trades_tape
    ON feed_trades (ticker_id, ts, chain_id, block, log_index);
CREATE INDEX IF NOT EXISTS feed_trades_side
    ON feed_trades (ticker_id, side, ts, chain_id, block, log_index);
CREATE INDEX IF NOT EXISTS feed_trades_at ON feed_trades (ts);
CREATE TABLE IF NOT EXISTS durable_state (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL
);
"""

# History; not durable_state.
TABLES = (
    "rfqs",
    "rfq_orders",
    "timelines",
    "timeline_makers",
    "journal_requests",
    "journal_frames",
    "webhook_deliveries",
    "feed_trades",
)
