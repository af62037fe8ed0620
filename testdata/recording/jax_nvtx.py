#!/usr/bin/env python3
"""jax_nvtx.py: a small JAX training loop with its own NVTX annotations, used to
record a real Nsight Systems export of an XLA program (kernels launched by XLA's
own threads and executables, not by the thread that holds the range).

NVTX ranges (default domain) come from the first of: the `nvtx` package,
CuPy's cupy.cuda.nvtx, torch.cuda.nvtx (none of them creates a CUDA context):
  warmup                                  compile + 3 steps
  arm=<f32|bf16> block=<b>                interleaved, --blocks each, --steps each
    step
      data        host batch -> device (jax.device_put: H2D)
      update      jitted loss + grad + SGD update (XLA executable)
      sync        block_until_ready on the new params
      readback    float(loss) (D2H, host sync)
"""
import argparse, json, os, platform, sys, time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np
import jax
import jax.numpy as jnp


def nvtx_backend():
    try:
        import nvtx as _n  # the `nvtx` package
        return "nvtx", (lambda s: _n.push_range(s)), (lambda: _n.pop_range())
    except Exception:
        pass
    try:
        from cupy.cuda import nvtx as _c
        return "cupy.cuda.nvtx", (lambda s: _c.RangePush(s)), (lambda: _c.RangePop())
    except Exception:
        pass
    import torch.cuda.nvtx as _t
    return "torch.cuda.nvtx", (lambda s: _t.range_push(s)), (lambda: _t.range_pop())


BACKEND, PUSH, POP = nvtx_backend()


class R:
    def __init__(self, name): self.name = name
    def __enter__(self): PUSH(self.name)
    def __exit__(self, *a): POP()


def init(key, d, h, dtype):
    k1, k2 = jax.random.split(key)
    return {"w1": (jax.random.normal(k1, (d, h)) / d ** 0.5).astype(dtype),
            "w2": (jax.random.normal(k2, (h, 1)) / h ** 0.5).astype(dtype)}


def loss_fn(p, x, y):
    z = jnp.tanh(x.astype(p["w1"].dtype) @ p["w1"]) @ p["w2"]
    return jnp.mean((z.astype(jnp.float32)[:, 0] - y) ** 2)


@jax.jit
def update(p, x, y):
    l, g = jax.value_and_grad(loss_fn)(p, x, y)
    return jax.tree_util.tree_map(lambda a, b: a - (1e-3 * b).astype(a.dtype), p, g), l


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--manifest", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    params = {"f32": init(jax.random.PRNGKey(0), a.dim, a.hidden, jnp.float32),
              "bf16": init(jax.random.PRNGKey(0), a.dim, a.hidden, jnp.bfloat16)}

    def step(arm):
        with R("step"):
            with R("data"):
                x = jax.device_put(rng.standard_normal((a.batch, a.dim), dtype=np.float32))
                y = jax.device_put(rng.standard_normal((a.batch,), dtype=np.float32))
            with R("update"):
                params[arm], l = update(params[arm], x, y)
            with R("sync"):
                jax.block_until_ready(params[arm])
            with R("readback"):
                return float(l)

    with R("warmup"):
        for arm in ("f32", "bf16"):
            for _ in range(3):
                step(arm)
    blocks = []
    for b in range(a.blocks):
        for arm in ("f32", "bf16"):
            t0 = time.time_ns()
            with R(f"arm={arm} block={b}"):
                for _ in range(a.steps):
                    lv = step(arm)
            blocks.append({"arm": arm, "block": b, "steps": a.steps, "wall_ns": time.time_ns() - t0, "last_loss": lv})
    man = {"schema": "jax-nvtx-run-manifest/1", "program": "testdata/recording/jax_nvtx.py",
           "nvtx_backend": BACKEND, "arms": ["f32", "bf16"], "blocks_per_arm": a.blocks,
           "steps_per_block": a.steps, "dim": a.dim, "hidden": a.hidden, "batch": a.batch,
           "blocks": blocks, "devices": [str(d) for d in jax.devices()],
           "versions": {"python": platform.python_version(), "jax": jax.__version__,
                        "jaxlib": getattr(jax.lib, "__version__", None) or __import__("jaxlib").__version__},
           "command": sys.argv}
    with open(a.manifest, "w") as f:
        json.dump(man, f, indent=2)
    print("ok", BACKEND, blocks[-1])


if __name__ == "__main__":
    main()
