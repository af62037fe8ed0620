#!/usr/bin/env bash
# Record the 2-GPU fixture (run on a 2-GPU machine from the repo root, with
# .rec/libdw carried): one process per GPU, NCCL all-reduce inside NVTX phases.
# NVLink multicast stays off (lib.sh exports NCCL_NVLS_ENABLE=0).
source scripts/record/lib.sh
cp testdata/recording/dist_allreduce.py "$W/"
log "host setup: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tr '\n' ';') NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
if profile dist_allreduce_2gpu 150 -t cuda,nvtx,osrt --sample=none --cpuctxsw=none \
    -- python3 dist_allreduce.py --manifest dist_allreduce_2gpu.manifest.json --blocks 2 --steps 20; then
    finish dist_allreduce_2gpu
fi
log "done; host=$HOST repo=$REPO"
ls -la "$OUT"
