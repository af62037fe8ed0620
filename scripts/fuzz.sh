#!/usr/bin/env bash
# Runs every Go fuzz target for FUZZTIME (default 60s) each.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-60s}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "fuzz $pkg $target ($t)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" -fuzzminimizetime 5s "$pkg"
  done
done
