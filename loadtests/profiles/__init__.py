"""Locustfiles: ``rfq_storm``, ``ladder``, ``preview`` and ``webhook_sink``.

See docs/load-testing.md.
"""
