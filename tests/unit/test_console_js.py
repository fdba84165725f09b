"""The console's JavaScript (simulator/console/*.js, ES modules loaded by index.html) checked
without a browser: every module parses (Node's own parser, `node --check`), and every name a
module imports from another is one that module exports. The browser tests then drive what the
modules do."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CONSOLE = Path(__file__).resolve().parents[2] / "simulator" / "console"
MODULES = sorted(CONSOLE.glob("*.js"))
IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([a-z_]+\.js)";$', re.MULTILINE)
EXPORT = re.compile(r"^export (?:async )?(?:function|class|const|let) ([A-Za-z_$][\w$]*)", re.M)


def exported(module: Path) -> set[str]:
    return set(EXPORT.findall(module.read_text()))


def test_the_page_loads_the_entry_module() -> None:
    assert (
        '<script type="module" src="/_sim/console/main.js"></script>'
        in (CONSOLE / "index.html").read_text()
    )


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_each_module_parses(module: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed (the README's requirements)"
    done = subprocess.run(
        [node, "--experimental-default-type=module", "--check", str(module)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_each_imported_name_is_exported_by_its_module(module: Path) -> None:
    text = module.read_text()
    statements = [line for line in text.splitlines() if line.startswith("import ")]
    found = IMPORT.findall(text)
    assert len(found) == len(statements), f"an import of another form: {statements}"
    for names, source in found:
        target = CONSOLE / source
        assert target.exists(), f"{module.name} imports {source}, which does not exist"
        wanted = {n.strip() for n in names.split(",") if n.strip()}
        assert wanted <= exported(target), (module.name, source, wanted - exported(target))
