"""Our modules and what each imports, read from the source with ast: the graph the layering test
judges and the proxy's black-box test walks. ALLOWED is the layering: our top-level packages,
lowest first, and the ones each may import."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


# Our top-level packages, and the ones each may import (besides itself). Everything not listed
# for a package is a wrong-way arrow; the order is the layering, lowest first.
ALLOWED: dict[str, frozenset[str]] = {
    "contracts": frozenset(),
    "rfqkit": frozenset({"contracts"}),
    "makers": frozenset({"rfqkit", "contracts"}),
    "provider_sandbox": frozenset({"rfqkit", "contracts"}),
    "simulator": frozenset({"rfqkit", "contracts", "makers", "provider_sandbox"}),
    "conformance": frozenset({"rfqkit", "contracts"}),
    "loadtests": frozenset({"rfqkit", "contracts", "conformance"}),
    "bench": frozenset(
        {"rfqkit", "contracts", "makers", "provider_sandbox", "simulator", "conformance"}
    ),
    "rfqsim": frozenset(
        {"rfqkit", "contracts", "makers", "provider_sandbox", "simulator", "conformance"}
    ),
}


OURS = frozenset(ALLOWED)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def sources() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in OURS:
        for path in (REPO / package).rglob("*.py"):
            if "tests" in path.relative_to(REPO).parts:
                continue
            found[module_name(path)] = path
    return found


def imports_of(path: Path) -> set[str]:
    """Every absolute module named by an import statement of the file (relative imports are
    resolved against the file's package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    inside = path.is_relative_to(REPO)
    package = module_name(path).rsplit(".", 1)[0] if inside and path.name != "__init__.py" else None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level and inside:
                base = (package or module_name(path)).split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            # `from pkg import module` names a module too
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def modules_imported(path: Path) -> set[str]:
    """The modules of ours a file imports, exactly: `import a.b` and `from a import b` where
    `a.b` is a module name that module; `from a import name` names the module `a` (the package
    itself only where a name of its own `__init__` is imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    known = sources()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [resolve(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = (package or module_name(path)).split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else resolve(module)
                for alias in node.names
            ]
        else:
            continue
        found.update(t for t in targets if t is not None)
    found.discard(module_name(path))
    return found


def resolve(name: str) -> str | None:
    """The module of ours that `name` refers to (a module, or the module defining a name)."""
    known = sources()
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def graph() -> dict[str, frozenset[str]]:
    edges: dict[str, frozenset[str]] = {}
    for module, path in sources().items():
        edges[module] = frozenset(imports_of(path))
    return edges


def top(name: str) -> str:
    return name.split(".", 1)[0]


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")
