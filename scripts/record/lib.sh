# Shared helpers for scripts/record/record_*.sh (sourced; run on the GPU machine
# from the repository root). Each recording NAME ends as $OUT/NAME.tar holding
# NAME.sqlite.xz, NAME.manifest.json, vendor-stats/NAME_<report>.csv,
# optionally NAME.parquetdir.tar.xz, and NAME.*.log.
set -u
REPO=$(pwd)
NSYS=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
# nsys's importer needs libdw.so.1, which the image lacks: carried in .rec/libdw
export LD_LIBRARY_PATH=$REPO/.rec/libdw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NVLink multicast stays off on shared hosts
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
W=${W:-/tmp/rec}
mkdir -p "$W/vendor-stats"
OUT=${OUT:-$W/out}
mkdir -p "$OUT"
HOST=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)
T0=$(date +%s)
DEADLINE=$((T0 + ${BUDGET_S:-270}))
want() { [ -z "${ONLY:-}" ] || [[ ",$ONLY," == *",$1,"* ]]; }
STATS_REPORTS=cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,nvtx_gpu_proj_sum
ANALYZE_RULES=cuda_api_sync,cuda_memcpy_sync,cuda_memset_sync

left() { echo $((DEADLINE - $(date +%s))); }
log() { echo "[$(( $(date +%s) - T0 ))s] $*"; }

# profile NAME TIMEOUT_S NSYS_OPTS... -- COMMAND...
profile() {
    local name=$1 to=$2; shift 2
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    local l; l=$(left)
    [ "$to" -gt $((l - 60)) ] && to=$((l - 60))
    if [ "$to" -lt 20 ]; then log "SKIP $name: no time left ($l s)"; return 1; fi
    log "profile $name (timeout ${to}s): ${opts[*]} -- $*"
    (cd "$W" && timeout "$to" "$NSYS" profile --force-overwrite=true -o "$name" "${opts[@]}" "$@") \
        >"$W/$name.profile.log" 2>&1
    local rc=$?
    tail -n 25 "$W/$name.profile.log"
    log "profile $name rc=$rc"
    echo "${opts[*]} -- $*" >"$W/$name.nsys-args"
    [ -f "$W/$name.nsys-rep" ]
}

# finish NAME [parquet]: export, vendor reports, scrub, compress, bundle into $OUT
finish() {
    local name=$1 parquet=${2:-}
    (
        cd "$W" || exit 1
        {
            log "finish $name"
            # shellcheck disable=SC2086
            "$NSYS" export --type sqlite --force-overwrite=true ${EXPORT_OPTS:-} -o "$name.sqlite" "$name.nsys-rep" ||
                "$NSYS" export --type sqlite --force-overwrite=true -o "$name.sqlite" "$name.nsys-rep"
            python3 - "$name.sqlite" <<'PY' || true
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("pragma table_info(NVTX_EVENTS)")]
if "jsonText" in cols:
    print("NVTX rows with jsonText/binaryData:", db.execute("select count(jsonText), count(binaryData), count(*) from NVTX_EVENTS").fetchone())
    print("sample jsonText:", db.execute("select substr(jsonText, 1, 400) from NVTX_EVENTS where jsonText is not null limit 1").fetchone())
PY
            "$NSYS" stats --format csv --force-overwrite=true -o "vendor-stats/$name" -r "$STATS_REPORTS" "$name.sqlite"
            "$NSYS" analyze --format csv --force-overwrite=true -o "vendor-stats/$name" -r "$ANALYZE_RULES" "$name.sqlite" \
                || "$NSYS" analyze --format csv -o "vendor-stats/$name" -r "$ANALYZE_RULES" "$name.sqlite"
            local pq=()
            if [ -n "$parquet" ]; then
                "$NSYS" export --type parquetdir --force-overwrite=true -o "$name.parquetdir" "$name.nsys-rep" && pq=("$name.parquetdir")
            fi
            python3 "$REPO/scripts/record/scrub.py" --replace "$HOST=gpu-host" --replace "$REPO=/repo" "$name.sqlite" "${pq[@]}"
            python3 "$REPO/scripts/record/manifest.py" "$name" "$NSYS"
            ls -la "$name".* vendor-stats/"$name"_* 
            xz -9 -T4 -f "$name.sqlite"
            local files=("$name.sqlite.xz" "$name.manifest.json" vendor-stats/"$name"_*.csv "$name".*.log)
            if [ ${#pq[@]} -gt 0 ]; then
                XZ_OPT=-9 tar -cJf "$name.parquetdir.tar.xz" "$name.parquetdir" && files+=("$name.parquetdir.tar.xz")
            fi
            log "bundle $name"
            tar -cf "$OUT/$name.tar" "${files[@]}"
            ls -la "$OUT/$name.tar"
        } >"$W/$name.finish.log" 2>&1
        cat "$W/$name.finish.log"
    )
}
