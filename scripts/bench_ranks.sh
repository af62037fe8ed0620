#!/bin/bash
# The reduce of docs/ranks.md over N synthetic rank datasets (default 1024):
# writes them once (from the bundled eager_graph_small export, each rank's
# clock moved by up to ±1 ms and its durations scaled by 1 ± 3 %), then
# times `analyze --from` over them on 2 cores with GNU time (wall, CPU,
# peak RSS). Usage: scripts/bench_ranks.sh [N] [DIR]
set -euo pipefail
n=${1:-1024}
dir=${2:-${TMPDIR:-/tmp}/nsysphase-ranks-$n}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)/nsysphase
(cd "$root" && go build -o "$bin" ./cmd/nsysphase)
if [ ! -d "$dir/rank0000" ]; then
  mkdir -p "$dir"
  (cd "$root" && NSYSPHASE_RANK_DATASETS="$dir" NSYSPHASE_RANK_DATASETS_N="$n" \
    go test ./internal/dataset -run TestWriteSyntheticRankDatasets -count=1 -timeout 30m)
fi
echo "reduce over $(ls -d "$dir"/rank* | wc -l) rank datasets ($(du -sh "$dir" | cut -f1)):"
/usr/bin/time -v taskset -c 0,1 "$bin" analyze --from --format json -o "$dir.json" "$dir"/rank* 2>&1 |
  grep -E 'Elapsed|User time|System time|Maximum resident'
