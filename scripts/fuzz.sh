#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME (default 60s) each.
#
# Go before 1.27 can fail a target with a bare "context deadline exceeded"
# when -fuzztime runs out while a worker is mid-call (golang/go#75804, a race
# in the fuzzing coordinator, fixed in Go 1.27): no input failed and none is
# written. Such a run is repeated once; a failing input, a panic or any other
# failure fails at once.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-60s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" -fuzzminimizetime 5s "$1" 2>&1 | tee "$log"; }
# Likewise when -fuzztime runs out while a loaded machine is still running
# the seed corpus ("gathering baseline coverage"): the coordinator stops the
# worker mid-seed and reports it "hung or terminated unexpectedly", with no
# failing input. A seed that really fails, hangs or exits fails both runs.
deadline_race() {
  ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log" || return 1
  grep -q '^    context deadline exceeded$' "$log" && return 0
  grep -q 'gathering baseline coverage' "$log" && ! grep -q 'now fuzzing with' "$log" &&
    grep -q '^    fuzzing process hung or terminated unexpectedly' "$log"
}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "fuzz $pkg $target ($t)"
    if ! fuzz "$pkg" "$target"; then
      if deadline_race; then
        echo "fuzz $pkg $target: stopped by the deadline, no failing input (golang/go#75804, or a seed corpus slower than -fuzztime); once more"
        fuzz "$pkg" "$target"
      else
        exit 1
      fi
    fi
  done
done
