"""Reproducible build of the Solidity sources in `contracts/src` into committed JSON artifacts.

    python -m contracts.build            # compile and (re)write contracts/artifacts/*.json
    python -m contracts.build --check    # compile in memory; exit 1 if any artifact differs

The pinned `solc` npm package (the emscripten build, driven through `solcjs --standard-json`)
compiles a fixed input: sources sorted by file name, fixed settings, and no metadata hash or
CBOR trailer in the bytecode. The same sources therefore give byte-identical artifacts on any
machine, which is what lets the artifacts be committed and checked in CI.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
SRC_DIR = PACKAGE_DIR / "src"
ARTIFACTS_DIR = PACKAGE_DIR / "artifacts"
SOLC_JS = REPO_ROOT / "node_modules" / "solc" / "solc.js"

COMPILER_VERSION = "0.8.37"
# Everything that influences the bytecode. `outputSelection` is added separately: it only
# chooses what solc reports, so it is not recorded in the artifacts.
SETTINGS: dict[str, Any] = {
    "evmVersion": "cancun",
    "metadata": {"appendCBOR": False, "bytecodeHash": "none"},
    "optimizer": {"enabled": True, "runs": 200},
}
_OUTPUT_SELECTION = {
    "*": {
        "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"],
        "": ["ast"],
    }
}
_SOLC_TIMEOUT_S = 600


class BuildError(RuntimeError):
    """The compiler is missing, failed, or reported an error or warning."""


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise BuildError("`node` not found on PATH; it is needed to run the pinned solcjs")
    if not SOLC_JS.exists():
        raise BuildError(f"{SOLC_JS} not found; run `npm ci` to install the pinned solc package")
    return node


def _run_solcjs(args: list[str], stdin: bytes = b"") -> str:
    # stdin and stdout are regular files, not pipes: solcjs ends with console.log() followed by
    # process.exit(), and Node writes to a pipe asynchronously, so piped output is cut at 64 KiB.
    # Writes to a file are synchronous and complete.
    with tempfile.TemporaryFile() as stdin_file, tempfile.TemporaryFile() as stdout_file:
        stdin_file.write(stdin)
        stdin_file.seek(0)
        try:
            proc = subprocess.run(
                [_node(), str(SOLC_JS), *args],
                stdin=stdin_file,
                stdout=stdout_file,
                stderr=subprocess.PIPE,
                timeout=_SOLC_TIMEOUT_S,
                check=False,
                cwd=REPO_ROOT,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BuildError(f"could not run solcjs {' '.join(args)}: {exc}") from exc
        if proc.returncode != 0:
            raise BuildError(
                f"solcjs {' '.join(args)} exited with {proc.returncode}: "
                f"{proc.stderr.decode(errors='replace')[-2000:]}"
            )
        stdout_file.seek(0)
        return stdout_file.read().decode()


def compiler_version() -> str:
    """The full version of the pinned compiler, checked against COMPILER_VERSION."""
    version = _run_solcjs(["--version"]).strip().splitlines()[-1].strip()
    if not version.startswith(COMPILER_VERSION + "+"):
        raise BuildError(f"solcjs reports version {version!r}, expected {COMPILER_VERSION}+...")
    return version


def source_files() -> list[Path]:
    return sorted(SRC_DIR.glob("*.sol"), key=lambda p: p.name)


def standard_json_input() -> dict[str, Any]:
    """The compiler input; source unit names are bare file names, so imports are `./X.sol`."""
    sources = {path.name: {"content": path.read_text(encoding="utf-8")} for path in source_files()}
    if not sources:
        raise BuildError(f"no Solidity sources in {SRC_DIR}")
    return {
        "language": "Solidity",
        "sources": sources,
        "settings": {**SETTINGS, "outputSelection": _OUTPUT_SELECTION},
    }


def _parse_output(stdout: str) -> dict[str, Any]:
    # solcjs prints a banner line about SMT solvers before the JSON document on stdout.
    if stdout.startswith("{"):
        start = 0
    else:
        newline = stdout.find("\n{")
        if newline < 0:
            raise BuildError(f"no JSON in solcjs output: {stdout[:500]!r}")
        start = newline + 1
    try:
        output, _ = json.JSONDecoder().raw_decode(stdout[start:])
    except json.JSONDecodeError as exc:
        raise BuildError(f"unparseable solcjs output: {exc}") from exc
    if not isinstance(output, dict):
        raise BuildError("solcjs output is not a JSON object")
    return output


def _deployable_contracts(output: dict[str, Any]) -> list[tuple[str, str]]:
    """(source, contract name) of every non-abstract `contract` (not interfaces/libraries)."""
    found: list[tuple[str, str]] = []
    for source, info in sorted(output.get("sources", {}).items()):
        for node in info["ast"]["nodes"]:
            if (
                node.get("nodeType") == "ContractDefinition"
                and node.get("contractKind") == "contract"
                and not node.get("abstract", False)
            ):
                found.append((source, node["name"]))
    return found


def compile_all() -> dict[str, dict[str, Any]]:
    """Compile every source and return {contract name: artifact dict} (what would be written)."""
    version = compiler_version()
    stdin = json.dumps(standard_json_input(), sort_keys=True).encode()
    output = _parse_output(_run_solcjs(["--standard-json"], stdin))
    problems = [
        err.get("formattedMessage") or err.get("message", "")
        for err in output.get("errors", [])
        if err.get("severity") in ("error", "warning")
    ]
    if problems:
        # Warnings fail the build too: the sources are small enough to keep warning-free.
        raise BuildError("solc reported problems:\n" + "\n".join(problems))
    artifacts: dict[str, dict[str, Any]] = {}
    for source, name in _deployable_contracts(output):
        if name in artifacts:
            raise BuildError(f"contract name {name} is defined in more than one source")
        compiled = output["contracts"][source][name]
        artifacts[name] = {
            "contractName": name,
            "abi": compiled["abi"],
            "bytecode": "0x" + compiled["evm"]["bytecode"]["object"],
            "deployedBytecode": "0x" + compiled["evm"]["deployedBytecode"]["object"],
            "compiler": {"version": version, "settings": SETTINGS},
        }
    return dict(sorted(artifacts.items()))


def render_artifact(artifact: dict[str, Any]) -> str:
    """The exact text of a committed artifact file."""
    return json.dumps(artifact, indent=2, sort_keys=True) + "\n"


def artifact_path(name: str) -> Path:
    return ARTIFACTS_DIR / f"{name}.json"


def diff_artifacts(artifacts: dict[str, dict[str, Any]]) -> list[str]:
    """Human-readable differences between `artifacts` and the files in ARTIFACTS_DIR."""
    problems: list[str] = []
    for name, artifact in artifacts.items():
        path = artifact_path(name)
        if not path.exists():
            problems.append(f"{path.name}: missing")
        elif path.read_text(encoding="utf-8") != render_artifact(artifact):
            problems.append(f"{path.name}: differs from a fresh build")
    for path in sorted(ARTIFACTS_DIR.glob("*.json")):
        if path.stem not in artifacts:
            problems.append(f"{path.name}: no longer produced by the sources")
    return problems


def write_artifacts(artifacts: dict[str, dict[str, Any]]) -> None:
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    for name, artifact in artifacts.items():
        artifact_path(name).write_text(render_artifact(artifact), encoding="utf-8")
    for path in ARTIFACTS_DIR.glob("*.json"):
        if path.stem not in artifacts:
            path.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m contracts.build", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="compile in memory and exit 1 if the committed artifacts differ",
    )
    args = parser.parse_args(argv)
    try:
        artifacts = compile_all()
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 2
    if args.check:
        problems = diff_artifacts(artifacts)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("artifacts are stale: run `python -m contracts.build`", file=sys.stderr)
            return 1
        print(f"{len(artifacts)} artifacts up to date")
        return 0
    write_artifacts(artifacts)
    print(f"wrote {len(artifacts)} artifacts to {ARTIFACTS_DIR.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
