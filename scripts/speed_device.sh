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
#  4. analyze of the .sqlite.xz vs xz -dc + analyze of the .sqlite;
#  5. 16 cores: analyze and ranges on a BIG-times copy (default 30: 3.2 GB;
#     BIG=0 skips it) with peak RSS, against the lean scan of that copy
#     (the vendor's report on it takes minutes: scripts/scale_device.sh
#     times it once).
# The copies are kept in $SCALE_DIR (default /tmp/nsysphase-scale, shared
# with scripts/scale_device.sh), so a later call on a warm machine reuses
# them.
set -euo pipefail
runs=${RUNS:-5}; n=${SCALE:-10}; nbig=${BIG:-30}
sdir=${SCALE_DIR:-/tmp/nsysphase-scale}; mkdir -p "$sdir"
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
for b in nsysphase scaleexport; do [ -f .bench/$b ] || xz -dk .bench/$b.xz; chmod +x .bench/$b; done
bin=.bench/nsysphase
tmp=$(mktemp -d); db=$tmp/large_interleaved.sqlite; big=$sdir/x$n.sqlite; huge=$sdir/x$nbig.sqlite; xzsrc=.bench/large_interleaved.sqlite.xz
# A freshly started VM pays its host for the first touch of each page of
# guest memory (system time of 1 s and more per analyze on a machine up for
# a minute); touch 8 GB once so that every measured program, ours and the
# vendor's alike, runs on memory the guest already has.
dd if=/dev/zero of=/dev/shm/warm bs=1M count=8192 status=none && rm -f /dev/shm/warm
xz -dc $xzsrc > $db; [ -f $big ] || .bench/scaleexport -n "$n" $db $big >/dev/null; cat $db $big > /dev/null
if [ "$nbig" -gt 0 ]; then [ -f $huge ] || .bench/scaleexport -n "$nbig" $db $huge >/dev/null; fi
# "2 cores" are two physical cores: logical CPU 0 and the first CPU that is
# not its SMT sibling (taskset -c 0,1 may be two threads of one core, which
# halves a multi-threaded program and leaves the single-threaded lean scan
# a core to itself). PIN overrides; SIBLINGS=1 also times analyze and the
# lean scan on CPU 0 and its sibling, for comparison.
sib0=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null || echo 0)
if [ -z "${PIN:-}" ]; then
  PIN=0,1
  for c in /sys/devices/system/cpu/cpu[0-9]*; do
    cpu=${c##*cpu}; [ "$cpu" = 0 ] && continue
    if [ "$(cat $c/topology/thread_siblings_list 2>/dev/null)" != "$sib0" ]; then PIN=0,$cpu; break; fi
  done
fi
# "16 cores": where the host has more, every 16-core measurement (the vendor's
# included) runs on CPUs 0-15 (PIN16 overrides), so hosts of different sizes
# compare.
if [ -z "${PIN16:-}" ] && [ "$(nproc)" -gt 16 ]; then PIN16=0-15; fi
c16=(); [ -n "${PIN16:-}" ] && c16=(taskset -c "$PIN16")
sibpair=$(echo "$sib0" | tr '-' ',' | cut -d, -f1,2)
case $sibpair in *,*) ;; *) SIBLINGS=0 ;; esac # no SMT: nothing to compare
echo "pinning: 16 cores ${PIN16:-all $(nproc) CPUs}; taskset -c $PIN (CPU 0's SMT siblings: $sib0; $(lscpu 2>/dev/null | grep -m1 'Thread(s) per core' | xargs))"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%Y-%m-%dT%H:%MZ); 1x $(du -h $db | cut -f1), ${n}x $(du -hL $big | cut -f1)$([ "$nbig" -gt 0 ] && echo ", ${nbig}x $(du -hL $huge | cut -f1)")"
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
# Input sums are remembered (internal/base/filehash): warm them once; "cold" runs
# below start from an empty cache each time (the first analysis of a file).
export XDG_CACHE_HOME=$tmp/cache; sleep 2
for f in $db $big $xzsrc $([ "$nbig" -gt 0 ] && echo $huge); do $bin analyze --quiet --out $tmp/w $f >/dev/null; rm -rf $tmp/w; done
t() { /usr/bin/time -f "%e %M" -o $tmp/t "$@" > /dev/null 2> $tmp/err || { echo "failed: $*" >&2; tail -3 $tmp/err >&2; }; cat $tmp/t; }
declare -a V A R P L B X D C G H Q SP SL; rv=0; ra=0; rp=0; rb=0; rg=0; rh=0; rr=0
for i in $(seq $runs); do
  rm -f $tmp/proj*; read -r w r < <(t "${c16[@]}" "$NSYS" stats --force-export=false -r nvtx_gpu_proj_sum --format csv --force-overwrite=true -o $tmp/proj $db); V+=($w); rv=$((r>rv?r:rv))
  rm -rf $tmp/o; read -r w r < <(t "${c16[@]}" $bin analyze --quiet --out $tmp/o $db); A+=($w); ra=$((r>ra?r:ra))
  read -r w r < <(t "${c16[@]}" $bin ranges --format csv $db); R+=($w); rr=$((r>rr?r:rr))
  rm -rf $tmp/o; read -r w r < <(t taskset -c $PIN $bin analyze --quiet --out $tmp/o $db); P+=($w); rp=$((r>rp?r:rp))
  read -r w _ < <(t taskset -c $PIN python3 $tmp/lean.py $db); L+=($w)
  if [ "${SIBLINGS:-0}" = 1 ]; then
    rm -rf $tmp/o; read -r w _ < <(t taskset -c $sibpair $bin analyze --quiet --out $tmp/o $db); SP+=($w)
    read -r w _ < <(t taskset -c $sibpair python3 $tmp/lean.py $db); SL+=($w)
  fi
  rm -rf $tmp/o; read -r w _ < <(XDG_CACHE_HOME=$tmp/cold$i t taskset -c $PIN $bin analyze --quiet --out $tmp/o $db); C+=($w)
  rm -rf $tmp/o; read -r w r < <(t taskset -c $PIN $bin analyze --quiet --out $tmp/o $big); B+=($w); rb=$((r>rb?r:rb))
  rm -rf $tmp/o; read -r w _ < <(t $bin analyze --quiet --out $tmp/o $xzsrc); X+=($w)
  read -r w _ < <(t sh -c "xz -dc $xzsrc > $tmp/dc.sqlite"); D+=($w); rm -f $tmp/dc.sqlite
  if [ "$nbig" -gt 0 ]; then
    cat $huge > /dev/null
    rm -rf $tmp/o; read -r w r < <(t "${c16[@]}" $bin analyze --quiet --out $tmp/o $huge); G+=($w); rg=$((r>rg?r:rg))
    read -r w r < <(t "${c16[@]}" $bin ranges --format csv $huge); H+=($w); rh=$((r>rh?r:rh))
    read -r w _ < <(t "${c16[@]}" python3 $tmp/lean.py $huge); Q+=($w)
  fi
  # As it goes: a run cut short by a time limit still says what it measured.
  echo "run $i (s): nsys ${V[-1]} analyze16 ${A[-1]} ranges16 ${R[-1]} analyze2 ${P[-1]} lean2 ${L[-1]} first2 ${C[-1]} analyze2-${n}x ${B[-1]} (max RSS so far: 16 cores $((ra/1024)) MB, 2 cores $((rp/1024)) MB, ${n}x $((rb/1024)) MB)$([ "$nbig" -gt 0 ] && echo " ${nbig}x: analyze16 ${G[-1]} ranges16 ${H[-1]} lean16 ${Q[-1]} ($((rg/1024)) MB)")"
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
pair() { local -n a=$1 b=$2; for i in "${!a[@]}"; do awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN{print x/y}'; done | sort -g | awk '{v[NR]=$1} END {print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
declare -a S; for i in "${!A[@]}"; do S+=($(awk -v a="${A[$i]}" -v d="${D[$i]}" 'BEGIN{print a+d}')); done
echo "runs (s): nsys ${V[*]} | analyze16 ${A[*]} | ranges16 ${R[*]} | analyze2 ${P[*]} | lean2 ${L[*]} | first2 ${C[*]} | analyze2 ${n}x ${B[*]} | analyze .xz ${X[*]} | xz -dc ${D[*]}"
printf '16 cores: nsys stats nvtx_gpu_proj_sum median %.2f s (%d MB); analyze %.3f s (%d MB; target <= 128 MB), ratio %.3f (target <= 0.03); ranges %.3f s (%d MB), ratio %.3f (target <= 0.03)\n' \
  $(med "${V[@]}") $((rv/1024)) $(med "${A[@]}") $((ra/1024)) $(pair A V) $(med "${R[@]}") $((rr/1024)) $(pair R V)
printf '2 cores: analyze median %.3f s (%d MB; target <= 128 MB), lean C-SQLite scan %.3f s, ratio %.2f (target <= 1.3)\n' $(med "${P[@]}") $((rp/1024)) $(med "${L[@]}") $(pair P L)
if [ "${SIBLINGS:-0}" = 1 ]; then
  echo "runs (s) on CPUs $sibpair: analyze ${SP[*]} | lean ${SL[*]}"
  printf 'CPUs %s (CPU 0 and its SMT sibling): analyze median %.3f s, lean scan %.3f s, ratio %.2f\n' $sibpair $(med "${SP[@]}") $(med "${SL[@]}") $(pair SP SL)
fi
printf '2 cores: first analysis (input hashed) median %.3f s, ratio %.2f to the lean scan\n' $(med "${C[@]}") $(pair C L)
printf '2 cores: analyze on %sx %.2f s (%d MB): time %.1fx, RSS %.2fx of 1x (targets <= %sx, <= 256 MB)\n' $n $(med "${B[@]}") $((rb/1024)) $(pair B P) $(awk -v a=$rb -v b=$rp 'BEGIN{print a/b}') $n
if [ "$nbig" -gt 0 ]; then
  echo "runs (s) on ${nbig}x: analyze16 ${G[*]} | ranges16 ${H[*]} | lean16 ${Q[*]}"
  printf '16 cores: analyze on %sx %.2f s (%d MB; targets <= 8 s, <= 512 MB), %.2fx its lean scan (%.2f s); ranges %.2f s (%d MB)\n' \
    $nbig $(med "${G[@]}") $((rg/1024)) $(pair G Q) $(med "${Q[@]}") $(med "${H[@]}") $((rh/1024))
fi
printf '.sqlite.xz: analyze %.2f s vs xz -dc + analyze %.2f s, ratio %.2f (target <= 1.3)\n' $(med "${X[@]}") $(med "${S[@]}") $(pair X S)
