"""The layout stays true: arrows between packages go one way only (docs/architecture.md "Packages
and the arrows allowed between them"). Read from the source with `ast`, so nothing is imported;
an import under `if TYPE_CHECKING:` counts like any other (an arrow is an arrow)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.unit.import_graph import (
    ALLOWED,
    OURS,
    REPO,
    graph,
    imports_of,
    modules_imported,
    resolve,
    sources,
    top,
    within,
)

# Inside the simulator: the layers below may not reach the ones named.
SIMULATOR_RULES: dict[str, tuple[str, ...]] = {
    "simulator.services": (
        "simulator.api",
        "simulator.adapters",
        "simulator.runtime",
        "simulator.cli",
        "aiohttp",
        "web3",
        "rfqkit.chain",
        "rfqkit.anvil",
        "rfqkit.tasks",
        "makers",
        "provider_sandbox",
    ),
    "simulator.adapters": ("simulator.api", "simulator.runtime", "simulator.cli"),
    "simulator.api": ("simulator.adapters", "simulator.runtime", "simulator.cli", "web3"),
}
# Inside the conformance harness, bottom up: wire (the client, the chain, the conventions every
# answer follows), deployment (the target and its venue), checks, calls; rules and report beside
# them; harness (the plugin and the CLI) on top. A folder may not reach the ones named.
CONFORMANCE_RULES: dict[str, tuple[str, ...]] = {
    "conformance.wire": (
        "conformance.deployment",
        "conformance.checks",
        "conformance.calls",
        "conformance.report",
        "conformance.harness",
    ),
    "conformance.rules": (
        "conformance.deployment",
        "conformance.checks",
        "conformance.calls",
        "conformance.report",
        "conformance.harness",
    ),
    "conformance.deployment": ("conformance.checks", "conformance.calls", "conformance.harness"),
    "conformance.checks": ("conformance.calls", "conformance.harness"),
    "conformance.calls": ("conformance.harness",),
    "conformance.report": ("conformance.harness",),
}
# Third-party libraries services must not reach even through our own modules.
SERVICE_FORBIDDEN_LIBRARIES = ("aiohttp", "web3")


def test_packages_import_only_the_layers_below_them() -> None:
    wrong: list[str] = []
    for module, names in sorted(graph().items()):
        for name in sorted(names):
            target = top(name)
            if target in OURS and target != top(module) and target not in ALLOWED[top(module)]:
                wrong.append(f"{module} imports {name}")
    assert wrong == [], "wrong-way arrows between packages:\n" + "\n".join(wrong)


def wrong_way(rules: dict[str, tuple[str, ...]]) -> list[str]:
    wrong: list[str] = []
    for module, names in sorted(graph().items()):
        for layer, forbidden in rules.items():
            if not within(module, layer):
                continue
            for name in sorted(names):
                if any(within(name, f) for f in forbidden):
                    wrong.append(f"{module} imports {name}")
    return list(dict.fromkeys(wrong))


def test_simulator_layers_point_one_way() -> None:
    wrong = wrong_way(SIMULATOR_RULES)
    assert wrong == [], "wrong-way arrows inside the simulator:\n" + "\n".join(wrong)


def test_conformance_folders_point_one_way() -> None:
    wrong = wrong_way(CONFORMANCE_RULES)
    assert wrong == [], "wrong-way arrows inside conformance/:\n" + "\n".join(wrong)


def reachable(start: str) -> Iterable[tuple[str, str]]:
    """(module, third-party or our module name) for everything `start` imports, transitively
    through our own modules."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in graph().get(module, frozenset()):
            yield module, name
            ours = resolve(name)
            if ours is not None:
                stack.append(ours)


def test_services_reach_no_http_or_web3_library_even_indirectly() -> None:
    wrong: set[str] = set()
    for module in graph():
        if not within(module, "simulator.services"):
            continue
        for via, name in reachable(module):
            if any(within(name, lib) for lib in SERVICE_FORBIDDEN_LIBRARIES):
                wrong.add(f"{module} reaches {name} (through {via})")
    assert sorted(wrong) == []


def node_of(module: str, depth: int) -> str:
    """Where a module counts in the package graph at `depth`: its folder, cut at `depth` parts.
    A loose module beside subpackages (simulator/clock.py next to simulator/api/) counts as
    itself: it is a shared piece of that folder, not the folder (a folder's files may import
    one another freely; only arrows between folders are judged)."""
    path = sources()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    has_subpackages = any(
        p.name == "__init__.py" and m.startswith(package + ".") for m, p in sources().items()
    )
    owner = module if has_subpackages and path.name != "__init__.py" else package
    return ".".join(owner.split(".")[:depth])


def package_graph(depth: int) -> dict[str, set[str]]:
    """Arrows between packages (folders, not files) cut at `depth` dotted parts (1: top-level
    packages, 2: simulator's layers, 3: the areas inside them), from our own modules only."""
    edges: dict[str, set[str]] = defaultdict(set)
    for module, names in graph().items():
        source = node_of(module, depth)
        for name in names:
            ours = resolve(name)
            if ours is None:
                continue
            target = node_of(ours, depth)
            if target != source:
                edges[source].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in edges.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(edges) | {t for ts in edges.values() for t in ts}):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_no_package_cycles(depth: int) -> None:
    """depth 1: top-level packages; 2: simulator.api / services / adapters / runtime; 3: the
    areas inside them (services.rfq, services.ramp, ...)."""
    assert cycles(package_graph(depth)) == []


def test_no_module_imports_in_a_cycle() -> None:
    """Module by module: no module of ours reaches itself through what it imports, so each can
    be read (and imported) after the ones it stands on. TYPE_CHECKING imports count too."""
    edges = {module: modules_imported(path) for module, path in sources().items()}
    assert cycles(edges) == []


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    """The checks above are only worth something if they can fail: a planted file that imports
    aiohttp from a service and the api from an adapter is caught by the same functions."""
    planted = tmp_path / "planted.py"
    planted.write_text("import aiohttp\nfrom simulator.api.http.appkeys import CLOCK\n")
    names = imports_of(planted)
    assert any(within(n, "aiohttp") for n in names)
    assert resolve("simulator.api.http.appkeys.CLOCK") == "simulator.api.http.appkeys"
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    # `from package import module` points at the module, not at the package's __init__.
    assert modules_imported(REPO / "provider_sandbox" / "api.py") >= {"provider_sandbox.errors"}
    assert "provider_sandbox" not in modules_imported(REPO / "provider_sandbox" / "api.py")
