#!/usr/bin/env python3
"""dist_train.py: a torchrun-launched multi-GPU workload with a known truth, for
recording distributed Nsight Systems exports whose answers are known in advance.

Launched by torchrun (RANK, LOCAL_RANK, WORLD_SIZE from the environment), one
process per GPU, NCCL. On a host with one GPU, --backend gloo --share-gpu runs
every rank on GPU 0 with gloo collectives (NCCL refuses two ranks on one GPU):
the ranks are real processes with real clocks, the collectives are host-side
and untraced, so the rank view is the one of a job without traced
communication. --mode picks the parallelism:
  ddp   DistributedDataParallel training (all-reduce in backward, autograd threads)
  fsdp  FullyShardedDataParallel training (all-gather / reduce-scatter)
  tp    two-way tensor-parallel inference (column/row split matmuls, all-reduce)
NVTX ranges (default domain):
  warmup                          --warmup steps, then
  arm=<arm> block=<b>             --blocks blocks of --steps steps each
    step
      data          batch on the host, pinned H2D copy
      forward       the model's forward
      backward      (ddp, fsdp) the backward pass, gradient collectives inside
      optimizer     (ddp, fsdp) the update and a .item() host sync of the loss
      comm          (tp) the explicit all-reduce of the row-parallel output
      memory_bound  (--hw) a bandwidth-bound copy chain on a large buffer:
                    high DRAM throughput, no tensor-core activity
      launch_bound  (--hw) hundreds of tiny kernels launched one by one from
                    the Python function launch_many_tiny: low SM activity,
                    host launch overhead dominates
Injected straggler (--straggler-rank R --straggler-phase P --straggler-steps
A:B --straggler-delay-ms D): rank R sleeps D ms on the host inside phase P in
counted steps A..B-1 (step numbers count from the first step after warm-up,
across blocks). Every rank writes its truth; rank 0 gathers it into the run
manifest (--manifest), under "truth".
NVLink multicast stays off: NCCL_NVLS_ENABLE=0 (set here too, before NCCL loads)."""
import argparse, json, os, platform, sys, time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.cuda.nvtx as nvtx


class R:
    def __init__(self, name): self.name = name
    def __enter__(self): nvtx.range_push(self.name)
    def __exit__(self, *a): nvtx.range_pop()


def mlp(d, layers):
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(d, d), nn.GELU()]
    return nn.Sequential(*mods)


def launch_many_tiny(t, n):
    # One kernel per call, each too small to fill the GPU: launch-bound on purpose.
    for _ in range(n):
        t.add_(1.0)
    return t


def memory_bound_chain(src, dst, n):
    # Pure copies of a buffer much larger than L2: DRAM-bound, no tensor cores.
    for _ in range(n):
        dst.copy_(src)
        src.copy_(dst)


class TPBlock(nn.Module):
    """Megatron-style two-layer block: column-parallel then row-parallel matmul."""

    def __init__(self, d, world, dev):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(d, d // world, device=dev) / d ** 0.5)
        self.w2 = nn.Parameter(torch.randn(d // world, d, device=dev) / d ** 0.5)

    def forward(self, x):
        return torch.nn.functional.gelu(x @ self.w1) @ self.w2


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ddp", "fsdp", "tp"], default="ddp")
    p.add_argument("--arms", default="base")
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--hw", action="store_true", help="add the memory_bound and launch_bound phases")
    p.add_argument("--straggler-rank", type=int, default=-1)
    p.add_argument("--straggler-phase", default="forward")
    p.add_argument("--straggler-steps", default="")
    p.add_argument("--straggler-delay-ms", type=float, default=0.0)
    p.add_argument("--backend", choices=["nccl", "gloo"], default="nccl")
    p.add_argument("--share-gpu", action="store_true", help="every rank on GPU 0 (gloo only)")
    p.add_argument("--manifest", required=True)
    a = p.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    if a.share_gpu and a.backend != "gloo":
        p.error("--share-gpu needs --backend gloo: NCCL refuses two ranks on one GPU")
    gpu = 0 if a.share_gpu else local
    torch.cuda.set_device(gpu)
    dev = torch.device("cuda", gpu)
    if a.backend == "nccl":
        dist.init_process_group("nccl", device_id=dev)
    else:
        dist.init_process_group("gloo")
    torch.manual_seed(1234 + rank)

    lo, hi = (int(v) for v in a.straggler_steps.split(":")) if a.straggler_steps else (0, 0)
    injected = []

    def maybe_sleep(phase, counted):
        if rank == a.straggler_rank and phase == a.straggler_phase and counted is not None and lo <= counted < hi:
            time.sleep(a.straggler_delay_ms / 1e3)
            injected.append(counted)

    if a.mode == "tp":
        model = TPBlock(a.dim, world, dev)
    else:
        model = mlp(a.dim, a.layers).to(dev)
        if a.mode == "ddp":
            model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
        else:
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            model = FSDP(model, device_id=dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4) if a.mode != "tp" else None
    host = torch.randn(a.batch, a.dim).pin_memory()
    tiny = torch.zeros(16, device=dev)
    big_src = torch.randn(64 << 20, device=dev)  # 256 MiB
    big_dst = torch.empty_like(big_src)

    def step(counted):
        with R("step"):
            with R("data"):
                maybe_sleep("data", counted)
                x = host.to(dev, non_blocking=True)
            with R("forward"):
                maybe_sleep("forward", counted)
                if a.mode == "tp":
                    with torch.no_grad():
                        y = model(x)
                else:
                    y = model(x)
                loss = y.square().mean()
            if a.mode == "tp":
                with R("comm"):
                    maybe_sleep("comm", counted)
                    dist.all_reduce(y)
            else:
                with R("backward"):
                    maybe_sleep("backward", counted)
                    loss.backward()
                with R("optimizer"):
                    maybe_sleep("optimizer", counted)
                    opt.step()
                    opt.zero_grad(set_to_none=True)
            if a.hw:
                with R("memory_bound"):
                    maybe_sleep("memory_bound", counted)
                    memory_bound_chain(big_src, big_dst, 4)
                with R("launch_bound"):
                    maybe_sleep("launch_bound", counted)
                    launch_many_tiny(tiny, 400)
            return loss.item()  # host sync at the step's end

    with R("warmup"):
        for _ in range(a.warmup):
            step(None)
    torch.cuda.synchronize()
    arms = a.arms.split(",")
    blocks, counted = [], 0
    for b in range(a.blocks):
        for arm in arms:
            dist.barrier()
            t0 = time.time_ns()
            with R(f"arm={arm} block={b}"):
                for _ in range(a.steps):
                    step(counted)
                    counted += 1
                torch.cuda.synchronize()
            blocks.append({"arm": arm, "block": b, "steps": a.steps, "wall_ns": time.time_ns() - t0})
    mine = {"rank": rank, "local_rank": local, "gpu_index": gpu, "pid": os.getpid(), "blocks": blocks,
            "injected_steps": injected, "gpu": torch.cuda.get_device_name(dev)}
    every = [None] * world
    dist.all_gather_object(every, mine)
    dist.barrier()
    dist.destroy_process_group()
    if rank != 0:
        return
    man = {
        "schema": "dist-train-run-manifest/1",
        "program": "testdata/recording/dist_train.py",
        "mode": a.mode, "world_size": world, "backend": a.backend, "shared_gpu": a.share_gpu, "arms": arms,
        "blocks_per_arm": a.blocks, "steps_per_block": a.steps, "warmup_steps": a.warmup,
        "dim": a.dim, "layers": a.layers, "batch": a.batch, "hw_phases": a.hw,
        "truth": {
            "straggler": None if a.straggler_rank < 0 else {
                "rank": a.straggler_rank, "phase": a.straggler_phase,
                "counted_steps": [lo, hi], "delay_ns": int(a.straggler_delay_ms * 1e6)},
            "memory_bound_phase": "memory_bound" if a.hw else None,
            "launch_bound_phase": "launch_bound" if a.hw else None,
            "launch_function": "launch_many_tiny" if a.hw else None,
        },
        "ranks": sorted(every, key=lambda r: r["rank"]),
        "env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")},
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "cuda_runtime": torch.version.cuda,
                     "nccl": ".".join(map(str, torch.cuda.nccl.version())) if a.backend == "nccl" else None},
        "command": sys.argv,
    }
    with open(a.manifest, "w") as f:
        json.dump(man, f, indent=2)


if __name__ == "__main__":
    main()
