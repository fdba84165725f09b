"""`--dist loadgroup` as pytest-xdist means it, under pytest 9: tests marked
`xdist_group(NAME)` go to one worker, so a module-scoped simulator starts once, not once per
worker that gets one of its tests.

pytest-xdist 3.8 tags a grouped test on the worker by rewriting `item._nodeid` to
`<node id>@<group>`, which its scheduler splits on; pytest 9 computes `Node.nodeid` from
`Node._id` and never reads `_nodeid`, so the tag never reached the scheduler and nothing was
grouped. This applies the same tag where pytest 9 reads it. Loaded by the repository's
conftest.py; a no-op outside xdist's workers and once xdist tags items itself.

A test of a module that defines a module-scoped fixture and names no group of its own gets its
module as its group: without one, `loadgroup` schedules such tests one by one, and each worker
that got one set the fixture up again (for most of those fixtures, an `rfqsim serve`)."""

from __future__ import annotations

import pytest
from _pytest.nodeid import coerce_node_id


def _module_fixture_group(item: pytest.Item) -> str | None:
    """The item's module path when the item uses a module-scoped fixture its module defines."""
    module = item.getparent(pytest.Module)
    info = getattr(item, "_fixtureinfo", None)
    if module is None or info is None:
        return None
    for defs in info.name2fixturedefs.values():
        for fixturedef in defs:
            if fixturedef.scope == "module" and fixturedef.baseid == module.nodeid:
                return module.nodeid
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on workers under --dist loadgroup
        return
    for item in items:
        groups = sorted({str(m.args[0]) for m in item.iter_markers("xdist_group") if m.args})
        if not groups and (module := _module_fixture_group(item)) is not None:
            groups = [module]
        if groups and "@" not in item.nodeid:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(groups)}")
