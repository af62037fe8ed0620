#!/usr/bin/env bash
# Scale measurements on the GPU host (through the device tool, carrying
# .bench/: nsysphase.xz and scaleexport.xz from `make static`, and
# large_interleaved.sqlite.xz), issue 29: for the 1x export and each
# N-times copy in SCALES (default "10 30"; the 30x copy is 3.2 GB), time and
# peak RSS of
#   - analyze --out on all cores, and pinned to 2 cores;
#   - ranges --format csv on all cores;
#   - the lean C-SQLite scan (same five statements as scripts/bench.sh);
#   - nsys stats -r nvtx_gpu_proj_sum, NSYS_RUNS times (default 1; 0 skips
#     it: on the 30x copy it takes minutes).
# Runs alternate, RUNS of each (default 3); medians, peak RSS the largest
# seen. The copies are kept in $SCALE_DIR (default /tmp/nsysphase-scale) so
# that a second call on a warm machine does not write them again, e.g.
#   SCALES=30 NSYS_RUNS=0 scripts/scale_device.sh; SCALES=30 RUNS=0 NSYS_RUNS=1 scripts/scale_device.sh
set -euo pipefail
scales=${SCALES:-${SCALE:-10 30}}
runs=${RUNS:-3}; nsys_runs=${NSYS_RUNS:-1}
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
dir=${SCALE_DIR:-/tmp/nsysphase-scale}; mkdir -p "$dir"
for b in nsysphase scaleexport; do [ -f .bench/$b ] || xz -dk .bench/$b.xz; chmod +x .bench/$b; done
bin=$PWD/.bench/nsysphase
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# A freshly started VM pays its host for the first touch of each page of
# guest memory: touch 8 GB once (see scripts/speed_device.sh).
[ -f "$dir/warm" ] || { dd if=/dev/zero of=/dev/shm/warm bs=1M count=8192 status=none && rm -f /dev/shm/warm; touch "$dir/warm"; }
db=$dir/x1.sqlite
[ -f "$db" ] || xz -dc .bench/large_interleaved.sqlite.xz > "$db"
for n in $scales; do
  [ -f "$dir/x$n.sqlite" ] || .bench/scaleexport -n "$n" "$db" "$dir/x$n.sqlite" > /dev/null
done
# The lean scan: the five statements of scripts/bench.sh, in the sqlite3
# CLI when present, else Python's sqlite3 module (both C SQLite).
lean_sql="select total(start)+total(end)+total(correlationId)+total(globalTid)+total(nameId) from CUPTI_ACTIVITY_KIND_RUNTIME;
select total(start)+total(end)+total(correlationId)+total(deviceId)+total(streamId)+total(shortName)+total(globalPid) from CUPTI_ACTIVITY_KIND_KERNEL;
select total(start)+total(end)+total(eventType)+total(globalTid)+total(length(text)) from NVTX_EVENTS;
select total(start)+total(end)+total(bytes)+total(copyKind)+total(correlationId) from CUPTI_ACTIVITY_KIND_MEMCPY;
select total(start)+total(end)+total(correlationId)+total(syncType) from CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;"
cat > "$tmp/lean.py" <<'PY'
import sqlite3, sys
c = sqlite3.connect('file:%s?immutable=1' % sys.argv[1], uri=True)
for q in sys.argv[2].split(';'):
    if q.strip():
        c.execute(q).fetchall()
PY
lean() { if command -v sqlite3 > /dev/null; then sqlite3 "file:$1?immutable=1" "$lean_sql"; else python3 "$tmp/lean.py" "$1" "$lean_sql"; fi; }
export -f lean; export tmp lean_sql
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%Y-%m-%dT%H:%MZ); $(for n in 1 $scales; do printf '%sx %s ' $n "$(du -hL "$dir/x$n.sqlite" | cut -f1)"; done)"
# Input sums are remembered (internal/base/filehash): warm them once.
export XDG_CACHE_HOME=$tmp/cache; sleep 2
for n in 1 $scales; do cat "$dir/x$n.sqlite" > /dev/null; $bin analyze --quiet --out "$tmp/w" "$dir/x$n.sqlite"; rm -rf "$tmp/w"; done
# t NAME CMD...: one run, appended to $tmp/NAME as "wall_s rss_kb".
t() { local name=$1; shift; /usr/bin/time -f "%e %M" -o "$tmp/t" "$@" > /dev/null 2> "$tmp/err" || { echo "failed: $*" >&2; tail -3 "$tmp/err" >&2; }; cat "$tmp/t" >> "$tmp/$name"; }
for i in $(seq "$runs"); do
  for n in 1 $scales; do
    f=$dir/x$n.sqlite
    rm -rf "$tmp/o"; t "analyze16_$n" $bin analyze --quiet --out "$tmp/o" "$f"
    rm -rf "$tmp/o"; t "analyze2_$n" taskset -c 0,1 $bin analyze --quiet --out "$tmp/o" "$f"
    t "ranges16_$n" $bin ranges --format csv "$f"
    t "lean16_$n" bash -c 'lean "$0"' "$f"
  done
done
if [ "$nsys_runs" -gt 0 ] && [ -x "$NSYS" ]; then
  for i in $(seq "$nsys_runs"); do
    for n in 1 $scales; do
      rm -f "$tmp"/proj*; t "nsys16_$n" "$NSYS" stats --force-export=false -r nvtx_gpu_proj_sum --format csv --force-overwrite=true -o "$tmp/proj" "$dir/x$n.sqlite"
    done
  done
fi
# med/peak NAME: median wall seconds, largest peak RSS (MB) of $tmp/NAME.
med() { [ -s "$tmp/$1" ] && cut -d' ' -f1 "$tmp/$1" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' || echo 0; }
peak() { [ -s "$tmp/$1" ] && awk '{ if ($2 > m) m = $2 } END { print int(m / 1024) }' "$tmp/$1" || echo 0; }
# summary NAME: "median s (runs: …) peak MB"
summary() { [ -s "$tmp/$1" ] || { echo "-"; return; }; echo "$(med "$1") s (runs: $(cut -d' ' -f1 "$tmp/$1" | xargs)) $(peak "$1") MB"; }
for n in 1 $scales; do
  echo "${n}x: analyze16 $(summary analyze16_$n) | analyze2 $(summary analyze2_$n) | ranges16 $(summary ranges16_$n) | lean scan $(summary lean16_$n) | nsys stats $(summary nsys16_$n)"
done
for n in $scales; do
  awk -v n="$n" -v a16="$(med analyze16_$n)" -v a1="$(med analyze16_1)" -v a2="$(med analyze2_$n)" -v a21="$(med analyze2_1)" \
      -v r16="$(med ranges16_$n)" -v l="$(med lean16_$n)" -v v="$(med nsys16_$n)" \
      -v m16="$(peak analyze16_$n)" -v m2="$(peak analyze2_$n)" -v m1="$(peak analyze2_1)" -v mr="$(peak ranges16_$n)" 'BEGIN {
    printf "%sx: 16 cores analyze %.2f s, %d MB (30x targets <= 12 s, <= 512 MB); ranges %.2f s, %d MB; analyze / lean scan %.2f", n, a16, m16, r16, mr, (l > 0) ? a16 / l : 0
    if (v > 0) printf "; analyze / nsys stats %.3f, ranges / nsys stats %.3f", a16 / v, r16 / v
    printf "\n%sx: 2 cores analyze %.2f s = %.1fx the 1x time (target <= 10x at 10x), peak RSS %d MB = %.2fx the 1x (target <= 256 MB at 10x)\n", n, a2, (a21 > 0) ? a2 / a21 : 0, m2, (m1 > 0) ? m2 / m1 : 0
  }'
done
