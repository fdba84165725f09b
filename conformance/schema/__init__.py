"""schemathesis layer of the conformance harness: property-based and stateful tests generated
from the target's ``GET /v2/openapi.json``.

* ``links.py``: the explicit OpenAPI links the harness adds (request → status / cancel / submit,
  webhooks create → delete);
* ``auth.py``: the run's caller (API key, funded taker, proofs of control), set up through
  ``/_sim`` on a simulator;
* ``deviations.py``: the reviewed deviations file and its matcher;
* ``checks.py``: the harness' own check (X-Request-Id on every response);
* ``hooks.py``: schema-scoped schemathesis hooks (deviation filter, proof signer, webhook janitor);
* ``settings.py``: the run's settings and its keyed and keyless passes;
* ``config.py``: the schemathesis configuration of a pass, the document loaded with the links;
* ``runner.py``: the passes run, the engine's events recorded;
* ``results.py``: the result of a pass and of the run;
* ``junit.py``: the JUnit XML report.

``python -m conformance.schema --help`` runs it outside pytest; ``docs/schemathesis.md`` has the
whole picture.
"""
