"""`rfqsim proxy`: a reverse proxy that checks the traffic between an app and a deployment
against the spec, with the conformance suite's own assertions (docs/proxy.md).

``forward`` relays HTTP and WebSocket exchanges unchanged; ``watcher`` runs every check of one
exchange: ``conventions`` (what every answer of a surface must do), ``resources`` (each
operation's answer as the spec's resource), ``documents`` (the service's own OpenAPI
descriptions), ``requests`` (the client's side), ``proofs`` (a valid proof refused as
invalid) and ``state`` (what shows across exchanges, in the bounded ``memory``). ``findings``
collects violations and ``report`` writes them; ``running`` is one run, ``spec`` the endpoint
and error tables, ``expect`` the few assertions of the proxy's own.
"""
