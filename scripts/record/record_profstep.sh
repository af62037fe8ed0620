#!/usr/bin/env bash
# Record the zero-config PyTorch fixture (run on the GPU machine from the repo
# root, with .rec/libdw carried): profiler_step.py under emit_nvtx, whose only
# step ranges are torch.profiler's ProfilerStep#N. Also keeps the small
# .nsys-rep itself (for the .nsys-rep input test).
source scripts/record/lib.sh
cp testdata/recording/profiler_step.py "$W/"
log "host setup: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) nsys: $("$NSYS" --version)"
if profile profiler_step 150 -t cuda,nvtx --sample=none --cpuctxsw=none \
    -- python3 profiler_step.py --manifest profiler_step.manifest.json --steps 40; then
    cp "$W/profiler_step.nsys-rep" "$OUT/" || true
    finish profiler_step
fi
log "done"
ls -la "$OUT"
