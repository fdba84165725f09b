# rfqsim tasks. `just serve` and `just test` are the quickstart; each sets up what it needs.
set shell := ["bash", "-euo", "pipefail", "-c"]

venv := ".venv/bin"

# List the recipes
default:
    @just --list

# Install the pinned Python packages and npm tools (idempotent, fast when nothing changed)
setup:
    @bash scripts/bootstrap.sh

# Start the simulator: Anvil chains, contracts, API on 127.0.0.1:8080 (pass flags after `--`)
serve *ARGS: setup
    {{venv}}/rfqsim serve {{ARGS}}

# Run the whole test suite (unit, integration, conformance) in parallel
test *ARGS: setup
    {{venv}}/python -m pytest -n 2 --dist loadgroup tests conformance/tests {{ARGS}}

# Unit tests only (no chains, seconds)
unit *ARGS: setup
    {{venv}}/python -m pytest tests/unit {{ARGS}}

# Conformance suite against a simulator it starts (or --base-url URL); writes conformance-report/
conformance *ARGS: setup
    {{venv}}/python -m pytest conformance/tests {{ARGS}}

# Rebuild contract artifacts from contracts/src (byte-identical to the committed ones)
contracts: setup
    {{venv}}/python -m contracts.build

# Lint, format check and strict typing
lint: setup
    {{venv}}/ruff check .
    {{venv}}/ruff format --check .
    {{venv}}/mypy

# Load-test PROFILE headless on loopback (rfq_storm, ladder, preview, webhook_sink); reports in loadtests/reports/
load PROFILE *ARGS: setup
    {{venv}}/python -m loadtests.run {{PROFILE}} {{ARGS}}

# Benchmarks: writes docs/performance.md
bench *ARGS: setup
    {{venv}}/python -m bench {{ARGS}}
