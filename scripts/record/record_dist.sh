#!/usr/bin/env bash
# Record distributed exports with a known truth (issue: real distributed profiles
# with a known straggler). Run on a machine with 2 or more GPUs from the repo
# root, with .rec/libdw carried (see lib.sh); results land in $OUT as NAME.tar
# (per-rank recordings: one NAME_rank<R>.tar per rank).
#
#   ddp_node          DDP training, one export per node, no straggler
#   ddp_strag_node    DDP, rank 1 sleeps 5 ms in `forward` of counted steps 10..29
#   ddp_strag_rank    the same run recorded as one export per rank (-o NAME_rank%q{RANK})
#   fsdp_strag_rank   FSDP, rank 0 sleeps 3 ms in `backward` of counted steps 5..14, per rank
#   tp_node           two-way tensor-parallel inference, one export per node, no straggler
#   hw_node           DDP with the memory_bound and launch_bound phases, recorded with
#                     GPU metrics and CPU/Python sampling
#   hw_solo           the same phases with one rank alone on its GPU (no other process
#                     in the GPU's metrics), GPU metrics at 5 kHz
#
# NGPU (default: every GPU nvidia-smi lists, at most 8) sets the world size.
# ONLY=name,name records a subset. The truth is each run's manifest ("truth").
#
# On a host with one GPU (NCCL refuses two ranks on one GPU) the same runs are
# recorded as gloo_<name>: two ranks share GPU 0 and talk through gloo, whose
# collectives run on the host and are not traced. A delay before a step's
# first collective is then absorbed by the other rank's wait in it, so there
# the straggler sleeps in `optimizer`, after the step's last collective: it
# ends those steps late by the delay, which the rank view's step-end skew
# must find (fsdp needs NCCL and is left out).
source scripts/record/lib.sh
cp testdata/recording/dist_train.py "$W/"
NGPU=${NGPU:-$(nvidia-smi -L | wc -l)}
[ "$NGPU" -gt 8 ] && NGPU=8
if [ "$NGPU" -lt 1 ]; then log "no GPU"; exit 2; fi
log "host setup: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $NGPU; nsys: $("$NSYS" --version)"
TRACE=(-t cuda,nvtx,osrt --sample=none --cpuctxsw=none)
NPROC=$NGPU PFX= SHARED=() SPHASE=forward
HW=(-t cuda,nvtx,osrt --cpuctxsw=none --gpu-metrics-devices=all --sample=cpu --python-sampling=true --python-sampling-frequency=1000)
if [ "$NGPU" -lt 2 ]; then
    NPROC=2 PFX=gloo_ SHARED=(--backend gloo --share-gpu) SPHASE=optimizer
    # gloo's TCP polling makes ~130k OS runtime calls a run (90% of the
    # export): without osrt the exports stay small enough to bundle
    TRACE=(-t cuda,nvtx --sample=none --cpuctxsw=none)
    HW=(-t cuda,nvtx --cpuctxsw=none --gpu-metrics-devices=all --gpu-metrics-frequency=2000 --sample=process-tree
        --python-sampling=true --python-sampling-frequency=1000)
fi
TORCHRUN=(torchrun --standalone --nproc-per-node "$NPROC")
STRAG1=(--straggler-rank 1 --straggler-phase "$SPHASE" --straggler-steps 10:30 --straggler-delay-ms 5)
pids=()

# node NAME NSYS_OPTS... -- WORKLOAD_ARGS...: one export holding every rank.
node() {
    local name=$1; shift
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    if profile "$name" 240 "${opts[@]}" -- "${TORCHRUN[@]}" dist_train.py --manifest "$name.manifest.json" "${SHARED[@]}" "$@"; then
        finish "$name" & pids+=($!)
    else
        return 1
    fi
}

# ranks NAME NSYS_OPTS... -- WORKLOAD_ARGS...: one export per rank, nsys inside torchrun.
ranks() {
    local name=$1; shift
    local opts=()
    while [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    local to; to=$(( $(left) - 90 ))
    [ "$to" -gt 300 ] && to=300
    if [ "$to" -lt 30 ]; then log "SKIP $name: no time left"; return 1; fi
    log "profile $name per rank (timeout ${to}s)"
    (cd "$W" && timeout "$to" "${TORCHRUN[@]}" --no-python "$NSYS" profile --force-overwrite=true \
        -o "${name}_rank%q{RANK}" "${opts[@]}" python3 dist_train.py --manifest "$name.manifest.json" "${SHARED[@]}" "$@") \
        >"$W/$name.profile.log" 2>&1
    log "profile $name rc=$?"; tail -n 20 "$W/$name.profile.log"
    local r
    for ((r = 0; r < NPROC; r++)); do
        [ -f "$W/${name}_rank$r.nsys-rep" ] || { log "missing ${name}_rank$r.nsys-rep"; continue; }
        cp "$W/$name.manifest.json" "$W/${name}_rank$r.manifest.json" 2>/dev/null
        cp "$W/$name.profile.log" "$W/${name}_rank$r.profile.log"
        echo "${opts[*]} -- dist_train.py $* (per rank)" >"$W/${name}_rank$r.nsys-args"
        finish "${name}_rank$r" & pids+=($!)
    done
}

want ddp_node && node ${PFX}ddp_node "${TRACE[@]}" -- --mode ddp
want ddp_strag_node && node ${PFX}ddp_strag_node "${TRACE[@]}" -- --mode ddp "${STRAG1[@]}"
want ddp_strag_rank && ranks ${PFX}ddp_strag_rank "${TRACE[@]}" -- --mode ddp "${STRAG1[@]}"
[ -z "$PFX" ] && want fsdp_strag_rank && ranks fsdp_strag_rank "${TRACE[@]}" -- --mode fsdp \
    --straggler-rank 0 --straggler-phase backward --straggler-steps 5:15 --straggler-delay-ms 3
want tp_node && node ${PFX}tp_node "${TRACE[@]}" -- --mode tp --blocks 2 --steps 30
if want hw_node; then
    # GPU metrics need the driver's profiling permission; without it the run
    # is recorded with CPU/Python sampling alone (the manifest's nsys args say which).
    node ${PFX}hw_node "${HW[@]}" -- --mode ddp --hw --steps 15 ||
        node ${PFX}hw_node "${HW[@]/--gpu-metrics-devices=all/--gpu-metrics-devices=none}" -- --mode ddp --hw --steps 15
fi
if want hw_solo; then
    # The hardware run with one rank alone on its GPU: GPU metrics are per
    # GPU, so without another process on it they are the phase's own (the
    # truth without sharing; 5 kHz for the 1–3 ms GPU windows).
    SOLO=("${HW[@]/--gpu-metrics-frequency=2000/--gpu-metrics-frequency=5000}")
    [[ " ${SOLO[*]} " == *" --gpu-metrics-frequency="* ]] || SOLO+=(--gpu-metrics-frequency=5000)
    TORCHRUN=(torchrun --standalone --nproc-per-node 1)
    node hw_solo "${SOLO[@]}" -- --backend gloo --mode ddp --hw --steps 10
fi
for p in "${pids[@]}"; do wait "$p"; done
log "done; host=$HOST repo=$REPO"
ls -la "$OUT"
