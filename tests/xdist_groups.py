"""`--dist loadgroup` as pytest-xdist means it, under pytest 9: tests marked
`xdist_group(NAME)` go to one worker, so a module-scoped simulator starts once, not once per
worker that gets one of its tests.

pytest-xdist 3.8 tags a grouped test on the worker by rewriting `item._nodeid` to
`<node id>@<group>`, which its scheduler splits on; pytest 9 computes `Node.nodeid` from
`Node._id` and never reads `_nodeid`, so the tag never reached the scheduler and nothing was
grouped. This applies the same tag where pytest 9 reads it. Loaded by the repository's
conftest.py; a no-op outside xdist's workers and once xdist tags items itself."""

from __future__ import annotations

import pytest
from _pytest.nodeid import coerce_node_id


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on workers under --dist loadgroup
        return
    for item in items:
        groups = sorted({str(m.args[0]) for m in item.iter_markers("xdist_group") if m.args})
        if groups and "@" not in item.nodeid:
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(groups)}")
