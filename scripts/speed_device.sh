#!/usr/bin/env bash
# Issue-19 measurements on the GPU host in one run (through the device tool,
# carrying .bench/: nsysphase.xz and scaleexport.xz from `make static`, and
# large_interleaved.sqlite.xz). Interleaved runs, medians and pairwise
# medians of ratios:
#  1. 16 cores: nsys stats -r nvtx_gpu_proj_sum vs nsysphase analyze --out
#     vs nsysphase ranges;
#  2. pinned to 2 cores: analyze vs the lean C-SQLite scan (sqlite3 CLI if
#     present, else Python's sqlite3 module, same five statements as
#     scripts/bench.sh);
#  3. pinned to 2 cores: analyze on a SCALE-times copy (time and peak RSS);
#  4. analyze of the .sqlite.xz vs xz -dc + analyze of the .sqlite.
set -euo pipefail
runs=${RUNS:-5}; n=${SCALE:-10}
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
for b in nsysphase scaleexport; do [ -f .bench/$b ] || xz -dk .bench/$b.xz; chmod +x .bench/$b; done
bin=.bench/nsysphase
tmp=$(mktemp -d); db=$tmp/large_interleaved.sqlite; big=$tmp/large_x$n.sqlite; xzsrc=.bench/large_interleaved.sqlite.xz
# A freshly started VM pays its host for the first touch of each page of
# guest memory (system time of 1 s and more per analyze on a machine up for
# a minute); touch 8 GB once so that every measured program, ours and the
# vendor's alike, runs on memory the guest already has.
dd if=/dev/zero of=/dev/shm/warm bs=1M count=8192 status=none && rm -f /dev/shm/warm
xz -dc $xzsrc > $db; .bench/scaleexport -n "$n" $db $big >/dev/null; cat $db $big > /dev/null
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%Y-%m-%dT%H:%MZ); 1x $(du -h $db | cut -f1), ${n}x $(du -h $big | cut -f1)"
"$NSYS" --version || true
cat > $tmp/lean.py <<'PY'
import sqlite3, sys
c = sqlite3.connect('file:%s?immutable=1' % sys.argv[1], uri=True)
for q in ['select total(start)+total(end)+total(correlationId)+total(globalTid)+total(nameId) from CUPTI_ACTIVITY_KIND_RUNTIME',
          'select total(start)+total(end)+total(correlationId)+total(deviceId)+total(streamId)+total(shortName)+total(globalPid) from CUPTI_ACTIVITY_KIND_KERNEL',
          'select total(start)+total(end)+total(eventType)+total(globalTid)+total(length(text)) from NVTX_EVENTS',
          'select total(start)+total(end)+total(bytes)+total(copyKind)+total(correlationId) from CUPTI_ACTIVITY_KIND_MEMCPY',
          'select total(start)+total(end)+total(correlationId)+total(syncType) from CUPTI_ACTIVITY_KIND_SYNCHRONIZATION']:
    c.execute(q).fetchall()
PY
# Input sums are remembered (internal/filehash): warm them once; "cold" runs
# below start from an empty cache each time (the first analysis of a file).
export XDG_CACHE_HOME=$tmp/cache; sleep 2
for f in $db $big $xzsrc; do $bin analyze --quiet --out $tmp/w $f >/dev/null; rm -rf $tmp/w; done
t() { /usr/bin/time -f "%e %M" -o $tmp/t "$@" > /dev/null 2> $tmp/err || { echo "failed: $*" >&2; tail -3 $tmp/err >&2; }; cat $tmp/t; }
declare -a V A R P L B X D C; rv=0; ra=0; rp=0; rb=0
for i in $(seq $runs); do
  rm -f $tmp/proj*; read -r w r < <(t "$NSYS" stats --force-export=false -r nvtx_gpu_proj_sum --format csv --force-overwrite=true -o $tmp/proj $db); V+=($w); rv=$((r>rv?r:rv))
  rm -rf $tmp/o; read -r w r < <(t $bin analyze --quiet --out $tmp/o $db); A+=($w); ra=$((r>ra?r:ra))
  read -r w _ < <(t $bin ranges --format csv $db); R+=($w)
  rm -rf $tmp/o; read -r w r < <(t taskset -c 0,1 $bin analyze --quiet --out $tmp/o $db); P+=($w); rp=$((r>rp?r:rp))
  read -r w _ < <(t taskset -c 0,1 python3 $tmp/lean.py $db); L+=($w)
  rm -rf $tmp/o; read -r w _ < <(XDG_CACHE_HOME=$tmp/cold$i t taskset -c 0,1 $bin analyze --quiet --out $tmp/o $db); C+=($w)
  rm -rf $tmp/o; read -r w r < <(t taskset -c 0,1 $bin analyze --quiet --out $tmp/o $big); B+=($w); rb=$((r>rb?r:rb))
  rm -rf $tmp/o; read -r w _ < <(t $bin analyze --quiet --out $tmp/o $xzsrc); X+=($w)
  read -r w _ < <(t sh -c "xz -dc $xzsrc > $tmp/dc.sqlite"); D+=($w); rm -f $tmp/dc.sqlite
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
pair() { local -n a=$1 b=$2; for i in "${!a[@]}"; do awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN{print x/y}'; done | sort -g | awk '{v[NR]=$1} END {print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
declare -a S; for i in "${!A[@]}"; do S+=($(awk -v a="${A[$i]}" -v d="${D[$i]}" 'BEGIN{print a+d}')); done
echo "runs (s): nsys ${V[*]} | analyze16 ${A[*]} | ranges16 ${R[*]} | analyze2 ${P[*]} | lean2 ${L[*]} | first2 ${C[*]} | analyze2 ${n}x ${B[*]} | analyze .xz ${X[*]} | xz -dc ${D[*]}"
printf '16 cores: nsys stats nvtx_gpu_proj_sum median %.2f s (%d MB); analyze %.3f s (%d MB), ratio %.3f (target <= 0.04); ranges %.3f s, ratio %.3f\n' \
  $(med "${V[@]}") $((rv/1024)) $(med "${A[@]}") $((ra/1024)) $(pair A V) $(med "${R[@]}") $(pair R V)
printf '2 cores: analyze median %.3f s (%d MB), lean C-SQLite scan %.3f s, ratio %.2f (target <= 1.5)\n' $(med "${P[@]}") $((rp/1024)) $(med "${L[@]}") $(pair P L)
printf '2 cores: first analysis (input hashed) median %.3f s, ratio %.2f to the lean scan\n' $(med "${C[@]}") $(pair C L)
printf '2 cores: analyze on %sx %.2f s (%d MB): time %.1fx, RSS %.2fx of 1x (targets <= %sx, sub-linear)\n' $n $(med "${B[@]}") $((rb/1024)) $(pair B P) $(awk -v a=$rb -v b=$rp 'BEGIN{print a/b}') $n
printf '.sqlite.xz: analyze %.2f s vs xz -dc + analyze %.2f s, ratio %.2f (target <= 1.3)\n' $(med "${X[@]}") $(med "${S[@]}") $(pair X S)
