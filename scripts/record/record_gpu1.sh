#!/usr/bin/env bash
# Record the single-GPU extra fixtures (run on the GPU machine from the repo root,
# with .rec/libdw carried; results land in $OUT as NAME.tar):
#   nvtx_streams         CUDA C++ + NVTX3 (testdata/recording/nvtx_streams.cu), + parquetdir
#   collector_backtrace  collector.py with CPU sampling, CUDA and Python backtraces
#   jax_nvtx             JAX loop with NVTX ranges (only if JAX imports)
# Exports are finished (export, vendor CSVs, scrub, xz) in the background while
# the next workload records.
source scripts/record/lib.sh
cp testdata/recording/nvtx_streams.cu testdata/recording/collector.py testdata/recording/jax_nvtx.py "$W/"
log "host setup: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -2 | tr '\n' ';') nsys: $("$NSYS" --version)"
"$NSYS" stats --help-reports 2>&1 | grep -E "^ *(cuda_api_sum|cuda_gpu_kern_sum|nvtx_gpu_proj_sum|nvtx_sum|cuda_gpu_mem_time_sum|cuda_gpu_mem_size_sum)" | head
"$NSYS" export --help 2>&1 | grep -iE -A2 "include|json|blob" | head -20
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
pids=()

# 1. CUDA C++ with NVTX3
want nvtx_streams && (cd "$W" && $NVCC -O2 -std=c++17 -arch=sm_90 -lineinfo -o nvtx_streams nvtx_streams.cu -lpthread -ldl) 2>&1 | tail -20
if ! want nvtx_streams; then :
elif [ -x "$W/nvtx_streams" ]; then
    if profile nvtx_streams 90 -t cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-memory-usage=true \
        -- ./nvtx_streams --manifest nvtx_streams.manifest.json --blocks 3 --steps 30; then
        finish nvtx_streams parquet & pids+=($!)
    fi
else
    log "nvcc build failed"
fi

# 2. collector with backtraces (fallbacks if an option is refused)
want collector_backtrace && for bt in "--cudabacktrace=all:1000 --python-backtrace=cuda" "--cudabacktrace=all --python-backtrace=cuda" "--cudabacktrace=all"; do
    # shellcheck disable=SC2086
    if profile collector_backtrace 150 -t cuda,nvtx,osrt --sample=process-tree --cpuctxsw=none $bt \
        -- python3 collector.py --manifest collector_backtrace.manifest.json --arms eager,graph --blocks 1 --steps 20 --num-envs 256; then
        EXPORT_OPTS="--include-json=true" finish collector_backtrace & pids+=($!)
        break
    fi
    grep -qiE "unrecognised|unrecognized|invalid|unknown|illegal" "$W/collector_backtrace.profile.log" || break
done

# 3. JAX (optional)
if want jax_nvtx && python3 -c "import jax; print(jax.__version__, jax.devices())" 2>&1 | tail -1; then
    if profile jax_nvtx 90 -t cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node \
        -- python3 jax_nvtx.py --manifest jax_nvtx.manifest.json --blocks 2 --steps 15; then
        finish jax_nvtx & pids+=($!)
    fi
fi
# re-scrub parquetdirs carried in .rec/rescrub (after a scrub.py change)
for t in "$REPO"/.rec/rescrub/*.parquetdir.tar.xz; do
    [ -f "$t" ] || continue
    (cd "$W" && tar -xJf "$t" && d=$(basename "$t" .tar.xz) &&
        python3 "$REPO/scripts/record/scrub.py" --replace "$HOST=gpu-host" --replace "$REPO=/repo" "$d" &&
        XZ_OPT=-9 tar -cJf "$OUT/$d.tar.xz" "$d") 2>&1 | cut -c1-300
done
for p in "${pids[@]}"; do wait "$p"; done
log "done; host=$HOST repo=$REPO"
ls -la "$OUT"
