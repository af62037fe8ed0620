#!/usr/bin/env bash
# On the GPU host (through the device tool, carrying .bench/ as for
# scripts/vs_nsys.sh, plus .bench/scaleexport.xz, a static build of
# internal/cmd/scaleexport): analyze pinned to 2 cores on large_interleaved
# and on an N-times copy (default 10), alternating, best of RUNS, with peak
# RSS: the scale targets of docs/performance.md on a quiet machine.
set -euo pipefail
n=${SCALE:-10}
runs=${RUNS:-3}
for b in nsysphase scaleexport; do [ -f .bench/$b ] || xz -dk .bench/$b.xz; chmod +x .bench/$b; done
db=/tmp/li.sqlite; big=/tmp/li_x$n.sqlite
xz -dc .bench/large_interleaved.sqlite.xz > $db
rm -f $big; .bench/scaleexport -n "$n" $db $big
cat $db $big > /dev/null
echo "host: $(nproc) cores, pinned to 0,1; $(date -u +%Y-%m-%dT%H:%MZ); 1x $(du -h $db | cut -f1), ${n}x $(du -h $big | cut -f1)"
for i in $(seq "$runs"); do
  for f in $db $big; do
    rm -rf /tmp/o
    /usr/bin/time -f "$(basename $f): %e s %M KB" taskset -c 0,1 .bench/nsysphase analyze --quiet --out /tmp/o $f
  done
done 2>&1 | grep KB
