#!/usr/bin/env bash
# `just test`: the main pass (unit, integration and conformance tests, pytest arguments as given)
# and, when no argument is given, after it the venue pass (the conformance suite against
# `rfqsim serve --instances 2`: one address, two processes; conformance-report/instances/) and
# beside it the foreign pass: the conformance suite against
# `rfqsim serve --no-control-api` behind `rfqsim proxy`, with only the inputs docs/conformance.md
# allows (conformance-report/no-control/: at least 98 % of the control-free rules must pass and the
# proxy must find no fault of the service).
#
# The two run at once because the foreign pass spends its time waiting out the deployment's own
# windows (rate limits, quote lifetimes: about a tenth of two cores busy), while the main pass
# keeps both cores busy. Its four workers each test a deployment of their own. Its output is
# written to conformance-report/no-control/pytest.log and shown after the main pass's. Each pass
# prints its wall time; the exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python

wall() { # label, start
  local s=$(($(date +%s) - $2))
  echo "$1: wall time $s s ($((s / 60)) min $((s % 60)) s)"
}

foreign_pid=""
foreign_log=conformance-report/no-control/pytest.log
stop_foreign() {
  if [ -n "$foreign_pid" ] && kill -0 "$foreign_pid" 2>/dev/null; then
    pkill -INT -P "$foreign_pid" 2>/dev/null # its pytest: stops its deployments, as Ctrl-C does
    wait "$foreign_pid" 2>/dev/null
  fi
}
trap 'stop_foreign; exit 130' INT TERM

if [ "$#" -eq 0 ]; then
  mkdir -p "$(dirname "$foreign_log")"
  (
    foreign_start=$(date +%s)
    rc=0
    "$python" -m pytest -n 4 conformance/tests --no-control \
      --deselect conformance/tests/test_schemathesis.py \
      --through-proxy conformance-report/no-control/proxy \
      --conformance-report conformance-report/no-control --min-control-free 98 -q || rc=$?
    wall "foreign pass" "$foreign_start"
    exit "$rc"
  ) >"$foreign_log" 2>&1 &
  foreign_pid=$!
  echo "foreign pass: started beside the main pass (its output follows the main pass's)"
fi

main_start=$(date +%s)
main_rc=0
# The slowest tests are listed after every run: where the next minute of CI time comes from.
"$python" -m pytest -n 2 --dist loadgroup --durations 25 tests conformance/tests "$@" || main_rc=$?
wall "main pass" "$main_start"

if [ -z "$foreign_pid" ]; then
  exit "$main_rc"
fi
venue_start=$(date +%s)
venue_rc=0
"$python" -m pytest -n 2 conformance/tests -q \
  --rfqsim-serve-arg=--instances --rfqsim-serve-arg=2 \
  --conformance-report conformance-report/instances || venue_rc=$?
wall "venue pass" "$venue_start"
foreign_rc=0
wait "$foreign_pid" || foreign_rc=$?
foreign_pid=""
echo "---- foreign pass ($foreign_log) ----"
cat "$foreign_log"
if [ "$main_rc" -ne 0 ]; then
  exit "$main_rc"
fi
if [ "$venue_rc" -ne 0 ]; then
  exit "$venue_rc"
fi
exit "$foreign_rc"
