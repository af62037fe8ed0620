#!/usr/bin/env bash
# Times the full `nsysphase analyze` (all phases, all metrics, CIs, Parquet
# out) on large_interleaved against two bare sqlite3 scans of the same file,
# interleaved run by run on a warm page cache: the wide scan (every column
# analyze reads) and the lean scan (five statements, the columns a minimal
# projection needs). Prints medians, the median of the pairwise ratios and
# peak RSS; and analyze of the .sqlite.xz against `xz -dc` + analyze of the
# .sqlite. Usage: scripts/bench.sh [export.sqlite[.xz]]  (RUNS=5, SCALE="N…")
# SCALE="10 30" also times analyze (time, peak RSS), ranges and the lean scan
# on 10× and 30× copies (1.1 and 3.2 GB in $TMPDIR), interleaved with the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-../shared/fixtures/nsys-2025.3-h200/large_interleaved.sqlite.xz}
runs=${RUNS:-5}
need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; (apt-get install -y "$2" || sudo apt-get install -y "$2") >/dev/null; }; }
need sqlite3 sqlite3
[ -x /usr/bin/time ] || need /usr/bin/time time
[ -f "$src" ] || { echo "bench: $src not found (pass an export)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/bench.sqlite"
case "$src" in
  *.xz) xz -dc "$src" > "$db"; xzsrc=$src ;;
  *) cp "$src" "$db"; xzsrc="$tmp/bench.sqlite.xz"; xz -T0 -6 -kc "$db" > "$xzsrc" ;;
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

lean_sql="
select total(start)+total(end)+total(correlationId)+total(globalTid)+total(nameId) from CUPTI_ACTIVITY_KIND_RUNTIME;
select total(start)+total(end)+total(correlationId)+total(deviceId)+total(streamId)+total(shortName)+total(globalPid) from CUPTI_ACTIVITY_KIND_KERNEL;
select total(start)+total(end)+total(eventType)+total(globalTid)+total(length(text)) from NVTX_EVENTS;
select total(start)+total(end)+total(bytes)+total(copyKind)+total(correlationId) from CUPTI_ACTIVITY_KIND_MEMCPY;
select total(start)+total(end)+total(correlationId)+total(syncType) from CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;"

# measure CMD...: prints "wall_s rss_kb" of one run.
measure() {
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  cat "$tmp/time"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ratios A[] B[]: the median of A[i]/B[i] (pairwise, run i of each).
pairwise() { paste <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{ print $1 / $2 }' | median; }

# SCALE="N…": also time analyze, ranges and the lean scan on N-times larger
# exports (replicated with shifted timestamps and fresh correlation ids by
# internal/cmd/scaleexport), interleaved with the other runs so that all see
# the same machine, and print the time and peak-RSS ratios against the
# original.
scales=${SCALE:-}
for n in $scales; do
  go run ./internal/cmd/scaleexport -n "$n" "$db" "$tmp/scaled$n.sqlite"
done

echo "input: $src ($(du -h "$db" | cut -f1) decompressed); $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
# analyze remembers each input's SHA-256 (internal/base/filehash): "analyze"
# runs with a remembered sum (the repeated analysis of one export), "first
# analysis" with an empty cache each time (the sum computed: one more read
# of the file, on a core the serial stretches leave idle).
export XDG_CACHE_HOME="$tmp/cache"
sleep 2 # the export must be older than filehash's two-second racy window
"$tmp/nsysphase" analyze --quiet --out "$tmp/warm" "$db" && rm -rf "$tmp/warm"
scan=(); lean=(); ana=(); cold=(); xzs=(); dcs=(); bigs=(); rss_scan=0; rss_lean=0; rss_ana=0; rss_cold=0; rss_xz=0; rss_big=0
for i in $(seq "$runs"); do
  read -r w r < <(measure sqlite3 "file:$db?immutable=1" "$scan_sql"); scan+=("$w"); rss_scan=$((r > rss_scan ? r : rss_scan))
  read -r w r < <(measure sqlite3 "file:$db?immutable=1" "$lean_sql"); lean+=("$w"); rss_lean=$((r > rss_lean ? r : rss_lean))
  rm -rf "$tmp/out"
  read -r w r < <(measure "$tmp/nsysphase" analyze --quiet --out "$tmp/out" "$db"); ana+=("$w"); rss_ana=$((r > rss_ana ? r : rss_ana))
  rm -rf "$tmp/out"
  read -r w r < <(XDG_CACHE_HOME="$tmp/cold$i" measure "$tmp/nsysphase" analyze --quiet --out "$tmp/out" "$db"); cold+=("$w"); rss_cold=$((r > rss_cold ? r : rss_cold))
  rm -rf "$tmp/out"
  read -r w r < <(measure "$tmp/nsysphase" analyze --quiet --out "$tmp/out" "$xzsrc"); xzs+=("$w"); rss_xz=$((r > rss_xz ? r : rss_xz))
  read -r w _ < <(measure sh -c "xz -dc '$xzsrc' > '$tmp/dc.sqlite'"); dcs+=("$w"); rm -f "$tmp/dc.sqlite"
  for n in $scales; do
    big="$tmp/scaled$n.sqlite"
    cat "$big" > /dev/null
    rm -rf "$tmp/outbig"
    measure "$tmp/nsysphase" analyze --quiet --out "$tmp/outbig" "$big" >> "$tmp/analyze$n"
    measure "$tmp/nsysphase" ranges --format csv "$big" >> "$tmp/ranges$n"
    measure sqlite3 "file:$big?immutable=1" "$lean_sql" >> "$tmp/lean$n"
  done
done
ms=$(printf '%s\n' "${scan[@]}" | median)
ml=$(printf '%s\n' "${lean[@]}" | median)
ma=$(printf '%s\n' "${ana[@]}" | median)
mx=$(printf '%s\n' "${xzs[@]}" | median)
printf 'wide sqlite3 scan       runs: %s  median %.2f s  peak RSS %d MB\n' "${scan[*]}" "$ms" $((rss_scan / 1024))
printf 'lean sqlite3 scan       runs: %s  median %.2f s  peak RSS %d MB\n' "${lean[*]}" "$ml" $((rss_lean / 1024))
printf 'nsysphase analyze       runs: %s  median %.2f s  peak RSS %d MB\n' "${ana[*]}" "$ma" $((rss_ana / 1024))
printf 'first analysis (hashed) runs: %s  median %.2f s  peak RSS %d MB\n' "${cold[*]}" "$(printf '%s\n' "${cold[@]}" | median)" $((rss_cold / 1024))
printf 'analyze of .sqlite.xz   runs: %s  median %.2f s  peak RSS %d MB\n' "${xzs[*]}" "$mx" $((rss_xz / 1024))
printf 'analyze / wide scan: %.2f (pairwise median)\n' "$(pairwise "${ana[*]}" "${scan[*]}")"
printf 'analyze / lean scan: %.2f (pairwise median; target <= 1.3)\n' "$(pairwise "${ana[*]}" "${lean[*]}")"
printf 'first analysis / lean scan: %.2f (pairwise median)\n' "$(pairwise "${cold[*]}" "${lean[*]}")"
sums=(); for i in "${!ana[@]}"; do sums+=("$(awk -v a="${ana[$i]}" -v d="${dcs[$i]}" 'BEGIN { print a + d }')"); done
printf '.sqlite.xz / (xz -dc + analyze): %.2f (pairwise median; target <= 1.3)\n' "$(pairwise "${xzs[*]}" "${sums[*]}")"
for n in $scales; do
  big="$tmp/scaled$n.sqlite"
  for k in analyze ranges lean; do
    runs_k=$(cut -d' ' -f1 "$tmp/$k$n" | xargs)
    printf '%-7s on %sx (%s)  runs: %s  median %.2f s  peak RSS %d MB\n' "$k" "$n" "$(du -h "$big" | cut -f1)" "$runs_k" \
      "$(cut -d' ' -f1 "$tmp/$k$n" | median)" "$(($(cut -d' ' -f2 "$tmp/$k$n" | sort -n | tail -1) / 1024))"
  done
  mb=$(cut -d' ' -f1 "$tmp/analyze$n" | median); rb=$(cut -d' ' -f2 "$tmp/analyze$n" | sort -n | tail -1)
  awk -v b="$mb" -v a="$ma" -v rb="$rb" -v ra="$rss_ana" -v n="$n" -v l="$(cut -d' ' -f1 "$tmp/lean$n" | median)" 'BEGIN {
    printf "scale %sx: analyze time %.1fx the 1x (target <= 10x at 10x), %.2fx its lean scan; peak RSS %d MB = %.1fx the 1x (targets <= 256 MB at 10x, <= 512 MB at 30x)\n", n, b / a, b / l, rb / 1024, rb / ra }'
done
