#!/usr/bin/env python3
"""dist_allreduce.py: a 2-GPU data-parallel step (one process per GPU, NCCL),
used to record a real multi-process, multi-GPU Nsight Systems export.

Each rank runs, inside NVTX ranges (default domain, torch.cuda.nvtx):
  warmup                                     3 steps
  arm=<sync|overlap> block=<b>               interleaved, --blocks each, --steps each
    step
      forward      a matmul chain on a [B, D] batch
      allreduce    dist.all_reduce of a gradient-sized tensor (NCCL kernel);
                   in the `overlap` arm it is async_op=True and waited in
                   `optimizer`, with a matmul on a side stream meanwhile
      optimizer    param update (foreach add) and a `.item()` host sync of the loss
NCCL adds its own NVTX domain ("NCCL") unless NCCL_NVTX_DISABLE=1.
Rank 0 writes the run manifest (and checks the all-reduce sum).
NVLink multicast stays off: NCCL_NVLS_ENABLE=0 (set here too, before NCCL loads)."""
import argparse, json, os, platform, socket, subprocess, sys, time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.cuda.nvtx as nvtx


class R:
    def __init__(self, name): self.name = name
    def __enter__(self): nvtx.range_push(self.name)
    def __exit__(self, *a): nvtx.range_pop()


def worker(rank, world, port, a, q):
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=dev)
    g = torch.Generator(device=dev); g.manual_seed(1234 + rank)
    D, B = a.dim, a.batch
    W = [torch.randn(D, D, device=dev, generator=g) * (1.0 / D ** 0.5) for _ in range(3)]
    x = torch.randn(B, D, device=dev, generator=g)
    grad = torch.empty(a.grad_mb * (1 << 20) // 4, device=dev)
    side = torch.cuda.Stream(device=dev)

    def step(i, overlap):
        with R("step"):
            with R("forward"):
                h = x
                for w in W:
                    h = torch.relu(h @ w)
                loss = h.square().mean()
                grad.fill_(float(rank + 1))
            with R("allreduce"):
                work = dist.all_reduce(grad, async_op=overlap)
                if overlap:
                    side.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(side):
                        extra = h @ W[0]
            with R("optimizer"):
                if overlap:
                    work.wait()
                    torch.cuda.current_stream().wait_stream(side)
                    del extra
                torch._foreach_add_(W, [grad[: D * D].view(D, D) * 1e-9] * len(W))
                lv = loss.item()  # host sync
            return lv

    with R("warmup"):
        for i in range(3):
            step(i, False)
    torch.cuda.synchronize()
    blocks, s = [], 0
    for b in range(a.blocks):
        for arm in ("sync", "overlap"):
            dist.barrier()
            t0 = time.time_ns()
            with R(f"arm={arm} block={b}"):
                for _ in range(a.steps):
                    step(s, arm == "overlap")
                    s += 1
                torch.cuda.synchronize()
            blocks.append({"arm": arm, "block": b, "steps": a.steps, "wall_ns": time.time_ns() - t0})
    expect = float(sum(r + 1 for r in range(world)))
    ok = bool(torch.all(grad == expect).item())
    dist.barrier()
    dist.destroy_process_group()
    q.put({"rank": rank, "pid": os.getpid(), "blocks": blocks, "allreduce_sum_ok": ok, "gpu": torch.cuda.get_device_name(dev)})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--dim", type=int, default=2048)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--grad-mb", type=int, default=32)
    p.add_argument("--manifest", required=True)
    a = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, a.world, port, a, q), name=f"rank{r}") for r in range(a.world)]
    for pr in procs: pr.start()
    res = sorted([q.get(timeout=600) for _ in procs], key=lambda r: r["rank"])
    for pr in procs: pr.join()
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip().splitlines()
    except Exception as e:  # noqa
        drv = [str(e)]
    man = {
        "schema": "dist-allreduce-run-manifest/1",
        "program": "testdata/recording/dist_allreduce.py",
        "world_size": a.world, "backend": "nccl", "arms": ["sync", "overlap"],
        "blocks_per_arm": a.blocks, "steps_per_block": a.steps, "warmup_steps": 3,
        "dim": a.dim, "batch": a.batch, "grad_mb": a.grad_mb,
        "ranks": res,
        "env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")},
        "gpus": drv,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "cuda_runtime": torch.version.cuda,
                     "nccl": ".".join(map(str, torch.cuda.nccl.version()))},
        "command": sys.argv,
    }
    with open(a.manifest, "w") as f:
        json.dump(man, f, indent=2)
    print("allreduce ok:", [r["allreduce_sum_ok"] for r in res])


if __name__ == "__main__":
    main()
