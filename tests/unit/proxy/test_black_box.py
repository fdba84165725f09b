"""The watching proxy is a black box like the conformance suite it reuses: it knows a deployment
only by what crosses the wire, so nothing of it (nor anything it imports of ours, at any depth)
reaches the simulator, the makers or the provider sandbox."""

from __future__ import annotations

from tests.unit.import_graph import graph, resolve, top, within

FORBIDDEN = ("simulator", "makers", "provider_sandbox")


def test_the_proxy_reaches_nothing_of_the_simulator() -> None:
    edges = graph()
    seen: set[str] = set()
    stack = [m for m in edges if within(m, "rfqsim.proxy") or m == "rfqsim.proxy_command"]
    assert "rfqsim.proxy.forward" in stack
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in edges.get(module, frozenset()):
            target = resolve(name)
            if target is not None:
                stack.append(target)
    reached = sorted(m for m in seen if top(m) in FORBIDDEN)
    assert reached == []
