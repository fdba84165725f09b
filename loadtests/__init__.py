"""Locust load profiles for rfqsim's reply budgets.

Profiles live in ``loadtests/profiles/`` (one locustfile each); ``python -m loadtests.run PROFILE``
runs one headless against a simulator it starts (or a loopback ``--host``) and writes CSV, HTML and
JSON reports under ``loadtests/reports/``. The SLO verdict (exact counts, not locust's bucketed
percentiles) sets the exit code. See ``docs/load-testing.md``.
"""
