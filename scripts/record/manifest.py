#!/usr/bin/env python3
"""manifest.py NAME NSYS: add a "recording" section (nsys command and version,
GPU, driver, compiler) to NAME.manifest.json in the current directory, creating
the file when the workload wrote none."""
import json, os, subprocess, sys, time


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:  # noqa
        return f"unavailable: {e}"


name, nsys = sys.argv[1], sys.argv[2]
path = f"{name}.manifest.json"
man = {}
if os.path.exists(path):
    with open(path) as f:
        man = json.load(f)
args = open(f"{name}.nsys-args").read().strip() if os.path.exists(f"{name}.nsys-args") else ""
nvcc = sh("nvcc", "--version").splitlines()
man["recording"] = {
    "name": name,
    "nsys_profile_args": args,
    "nsys_version": sh(nsys, "--version"),
    "export": f"nsys export --type sqlite -o {name}.sqlite {name}.nsys-rep",
    "gpus": sh("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader").splitlines(),
    "nvcc": nvcc[-1] if nvcc else None,
    "recorded_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "scrubbed": "host name -> gpu-host, working dir -> rec, user -> '' (scripts/record/scrub.py)",
}
with open(path, "w") as f:
    json.dump(man, f, indent=2)
