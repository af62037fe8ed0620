#!/usr/bin/env bash
# Runs on the GPU host (through the device tool): times the vendor's
# `nsys stats -r nvtx_gpu_proj_sum` and `nsysphase analyze` (full: all phases,
# metrics, CIs, Parquet out) on the same export, RUNS times each, alternating,
# and prints a table. Needs .bench/nsysphase (make static) and the export in
# .bench/ (both carried). Usage: scripts/vs_nsys.sh [export.sqlite.xz]
set -euo pipefail
src=${1:-.bench/large_interleaved.sqlite.xz}
runs=${RUNS:-3}
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
out=${OUT:-/tmp/vs}
mkdir -p "$out"
tmp=$(mktemp -d)
db="$tmp/$(basename "${src%.xz}")"
xz -dc "$src" > "$db"
cat "$db" > /dev/null
bin=.bench/nsysphase
[ -f "$bin" ] || xz -dk "$bin.xz"
chmod +x "$bin"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "input: $(basename "$db") $(du -h "$db" | cut -f1)"
"$NSYS" --version || true
t() { /usr/bin/time -f "%e %M" -o "$tmp/t" "$@" > "$tmp/stdout" 2> "$tmp/stderr" || { echo "failed: $*"; tail -5 "$tmp/stderr"; }; cat "$tmp/t"; }
v=(); n=(); g=()
for i in $(seq "$runs"); do
  rm -f "$tmp"/proj*.csv
  read -r w r < <(t "$NSYS" stats --force-export=false -r nvtx_gpu_proj_sum --format csv --force-overwrite=true -o "$tmp/proj" "$db"); v+=("$w/$((r/1024))MB")
  rm -rf "$tmp/outdir"
  read -r w r < <(t "$bin" analyze --quiet --out "$tmp/outdir" "$db"); n+=("$w/$((r/1024))MB")
  read -r w r < <(t "$bin" ranges --format csv "$db"); g+=("$w/$((r/1024))MB")
done
ls "$tmp"/proj* >/dev/null 2>&1 && cp "$tmp"/proj*.csv "$out/" 2>/dev/null || true
"$bin" ranges --format csv "$db" > "$out/nsysphase_ranges.csv" 2>/dev/null || true
if cmp -s <(sort "$out/nsysphase_ranges.csv") <(sort "$out"/proj*.csv); then echo "nsysphase ranges CSV: identical to the vendor's rows"; else echo "nsysphase ranges CSV: DIFFERS from the vendor's"; fi
echo "nsys stats -r nvtx_gpu_proj_sum (wall s / peak RSS): ${v[*]}"
echo "nsysphase analyze --out        (wall s / peak RSS): ${n[*]}"
echo "nsysphase ranges (same report)  (wall s / peak RSS): ${g[*]}"
best() { printf '%s\n' "$@" | cut -d/ -f1 | sort -n | head -1; }
bv=$(best "${v[@]}"); bn=$(best "${n[@]}"); bg=$(best "${g[@]}")
awk -v a="$bn" -v b="$bv" -v c="$bg" 'BEGIN { printf "best: nsys %.2f s, nsysphase analyze %.2f s (ratio %.3f, target <= 0.10), nsysphase ranges %.2f s (ratio %.3f)\n", b, a, a / b, c, c / b }'
