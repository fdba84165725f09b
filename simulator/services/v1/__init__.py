"""The v1 API's own facts that are no trading area's: the service status (/v1/status) and the
corridor list (/v1/corridors). The v1 book (swaps, limit orders) lives in its own areas."""
