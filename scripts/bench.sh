#!/usr/bin/env bash
# Times the full `nsysphase analyze` (all phases, all metrics, CIs, Parquet
# out) against a bare sqlite3 scan of the same columns on large_interleaved,
# three times each on a warm page cache, and prints the best of each, their
# ratio and the peak RSS. Usage: scripts/bench.sh [export.sqlite[.xz]]
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-../shared/fixtures/nsys-2025.3-h200/large_interleaved.sqlite.xz}
runs=${RUNS:-3}
need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; (apt-get install -y "$2" || sudo apt-get install -y "$2") >/dev/null; }; }
need sqlite3 sqlite3
[ -x /usr/bin/time ] || need /usr/bin/time time
[ -f "$src" ] || { echo "bench: $src not found (pass an export)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/bench.sqlite"
case "$src" in
  *.xz) xz -dc "$src" > "$db" ;;
  *) cp "$src" "$db" ;;
esac
go build -trimpath -o "$tmp/nsysphase" ./cmd/nsysphase
cat "$db" > /dev/null # warm the page cache

scan_sql="
select total(start),total(end),total(globalTid),total(correlationId),total(nameId) from CUPTI_ACTIVITY_KIND_RUNTIME;
select total(start),total(end),total(globalPid),total(deviceId),total(correlationId),total(demangledName),total(graphNodeId) from CUPTI_ACTIVITY_KIND_KERNEL;
select total(start),total(end),total(globalPid),total(deviceId),total(bytes),total(copyKind),total(srcKind),total(dstKind),total(correlationId) from CUPTI_ACTIVITY_KIND_MEMCPY;
select total(start),total(end),total(eventType),total(globalTid),total(endGlobalTid),total(textId),total(domainId),sum(length(text)) from NVTX_EVENTS;
select count(*), sum(length(value)) from StringIds;"
for t in CUPTI_ACTIVITY_KIND_MEMSET CUPTI_ACTIVITY_KIND_GRAPH_TRACE; do
  if sqlite3 "file:$db?immutable=1" "select 1 from sqlite_master where name='$t'" | grep -q 1; then
    scan_sql="$scan_sql select total(start),total(end),total(globalPid),total(correlationId) from $t;"
  fi
done

# measure CMD...: prints "wall_s rss_kb" of one run.
measure() {
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  cat "$tmp/time"
}
best() { sort -n | head -1; }

# SCALE=N: also time analyze on an N-times larger export (replicated with
# shifted timestamps and fresh correlation ids by internal/cmd/scaleexport),
# interleaved with the other runs so that both see the same machine, and
# print the time and peak-RSS ratios against the original.
if [ -n "${SCALE:-}" ]; then
  big="$tmp/scaled.sqlite"
  go run ./internal/cmd/scaleexport -n "$SCALE" "$db" "$big"
  cat "$big" > /dev/null
fi

echo "input: $src ($(du -h "$db" | cut -f1) decompressed); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
scan=(); ana=(); bigs=(); rss_scan=0; rss_ana=0; rss_big=0
for i in $(seq "$runs"); do
  read -r w r < <(measure sqlite3 "file:$db?immutable=1" "$scan_sql"); scan+=("$w"); rss_scan=$((r > rss_scan ? r : rss_scan))
  rm -rf "$tmp/out"
  read -r w r < <(measure "$tmp/nsysphase" analyze --quiet --out "$tmp/out" "$db"); ana+=("$w"); rss_ana=$((r > rss_ana ? r : rss_ana))
  if [ -n "${SCALE:-}" ]; then
    rm -rf "$tmp/outbig"
    read -r w r < <(measure "$tmp/nsysphase" analyze --quiet --out "$tmp/outbig" "$big"); bigs+=("$w"); rss_big=$((r > rss_big ? r : rss_big))
  fi
done
bs=$(printf '%s\n' "${scan[@]}" | best)
ba=$(printf '%s\n' "${ana[@]}" | best)
printf 'bare sqlite3 scan     runs: %s  best %.2f s  peak RSS %d MB\n' "${scan[*]}" "$bs" $((rss_scan / 1024))
printf 'nsysphase analyze     runs: %s  best %.2f s  peak RSS %d MB\n' "${ana[*]}" "$ba" $((rss_ana / 1024))
awk -v a="$ba" -v s="$bs" 'BEGIN { printf "ratio analyze / scan: %.2f (target <= 2.0)\n", a / s }'
if [ -n "${SCALE:-}" ]; then
  bb=$(printf '%s\n' "${bigs[@]}" | best)
  printf 'analyze on %sx (%s)  runs: %s  best %.2f s  peak RSS %d MB\n' "$SCALE" "$(du -h "$big" | cut -f1)" "${bigs[*]}" "$bb" $((rss_big / 1024))
  awk -v b="$bb" -v a="$ba" -v rb="$rss_big" -v ra="$rss_ana" -v n="$SCALE" 'BEGIN { printf "scale %sx: time %.1fx (target <= %.1fx), peak RSS %.1fx\n", n, b / a, n * 1.05, rb / ra }'
fi
