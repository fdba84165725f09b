"""Per-API calls the tests make: RFQ, v1 (book, swaps, limit orders), ramp, feed, webhooks."""
