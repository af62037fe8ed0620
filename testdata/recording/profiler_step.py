#!/usr/bin/env python3
"""profiler_step.py: a small PyTorch training loop annotated the way PyTorch users
do it, with no hand-written NVTX: torch.autograd.profiler.emit_nvtx() turns every
aten op and every record_function scope into an NVTX range, and the loop is driven
by torch.profiler's step ranges `ProfilerStep#N` (profiler.step() opens them; when
torch.profiler.profile cannot run inside emit_nvtx, the same record_function
scopes are opened by hand). No arm ranges, no collector_step: the case nsysphase
must segment zero-config.

Per step: data (H2D of a pinned batch), forward, backward, optimizer, and a
loss.item() host sync every step (a scalar read)."""
import argparse, json, platform, sys, time

import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=40)
p.add_argument("--batch", type=int, default=4096)
p.add_argument("--manifest", default="")
a = p.parse_args()

dev = torch.device("cuda")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
xs = torch.randn(a.batch, 256).pin_memory()
ys = torch.randn(a.batch, 1).pin_memory()


def one_step():
    with torch.profiler.record_function("data"):
        x = xs.to(dev, non_blocking=True)
        y = ys.to(dev, non_blocking=True)
    with torch.profiler.record_function("forward"):
        loss = ((model(x) - y) ** 2).mean()
    with torch.profiler.record_function("backward"):
        opt.zero_grad(set_to_none=True)
        loss.backward()
    with torch.profiler.record_function("optimizer"):
        opt.step()
    return float(loss.item())


for _ in range(3):  # warm-up outside any profiler range
    one_step()
torch.cuda.synchronize()

mode = "torch.profiler.profile"
t0 = time.time()
with torch.autograd.profiler.emit_nvtx():
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(a.steps):
                one_step()
                prof.step()
    except RuntimeError as e:  # the profiler refuses to nest inside emit_nvtx
        mode = f"record_function by hand ({str(e).splitlines()[0][:120]})"
        for i in range(a.steps):
            with torch.profiler.record_function(f"ProfilerStep#{i + 1}"):
                one_step()
torch.cuda.synchronize()
wall = time.time() - t0
if a.manifest:
    json.dump({"workload": "profiler_step.py", "steps": a.steps, "batch": a.batch, "step_ranges": mode,
               "wall_s": wall, "torch": torch.__version__, "python": platform.python_version(),
               "gpu": torch.cuda.get_device_name(0)}, open(a.manifest, "w"), indent=1)
print("mode:", mode, "wall_s:", round(wall, 3))
