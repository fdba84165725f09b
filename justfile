# rfqsim tasks. `just serve` and `just test` are the quickstart; each sets up what it needs.
set shell := ["bash", "-euo", "pipefail", "-c"]
# Recipe arguments reach the commands as "$@", quoted as typed; a leading `--` (as in
# `just serve -- --port 0`) is dropped, so both spellings work.
set positional-arguments

venv := ".venv/bin"

# List the recipes
default:
    @just --list

# Install the pinned Python packages and npm tools (idempotent, fast when nothing changed)
setup:
    @bash scripts/bootstrap.sh

# Start the simulator: Anvil chains (RPC 8545, 8546), contracts, API on 127.0.0.1:8080; flags as `rfqsim serve` takes them
serve *ARGS: setup
    @if [ "${1:-}" = "--" ]; then shift; fi; {{venv}}/rfqsim serve "$@"

# Any rfqsim command: `just rfqsim keys list`, `just rfqsim trigger rfq.filled --api-key KEY`, `just rfqsim --help`
rfqsim *ARGS: setup
    @if [ "${1:-}" = "--" ]; then shift; fi; {{venv}}/rfqsim "$@"

# Run the whole test suite (unit, integration, conformance) in parallel; without arguments beside it the conformance suite against a foreign deployment (`rfqsim serve --no-control-api` behind `rfqsim proxy`, inputs only; conformance-report/no-control/: at least 98 % of the control-free rules must pass and the proxy must find no fault)
# Each pass prints its wall time, and pytest the time per part (docs/testing.md "Time per part").
test *ARGS: setup
    @if [ "${1:-}" = "--" ]; then shift; fi; bash scripts/test_passes.sh "$@"

# Unit tests only (no chains, seconds)
unit *ARGS: setup
    {{venv}}/python -m pytest tests/unit "$@"

# Conformance suite against a simulator it starts (or --base-url URL); writes conformance-report/
conformance *ARGS: setup
    {{venv}}/python -m pytest conformance/tests "$@"

# Mutation score: a proxy breaks the spec one way at a time, with and without /_sim (--mode, -k NAME); writes conformance-report/mutants.md
mutants *ARGS: setup
    {{venv}}/python -m conformance.mutants "$@"

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
    {{venv}}/python -m loadtests.run "$@"

# Screenshots of every console view into docs/console/ (the browser tests, run against Debian's chromium)
screenshots: setup
    RFQSIM_CONSOLE_SCREENSHOTS=docs/console {{venv}}/python -m pytest tests/integration/test_console_browser.py -q

# Benchmarks: writes docs/performance.md
bench *ARGS: setup
    {{venv}}/python -m bench "$@"
