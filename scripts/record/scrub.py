#!/usr/bin/env python3
"""Scrub the recording machine's identity out of an Nsight Systems export
(SQLite file or `--type parquetdir` folder) before it is committed.

  scrub.py [--replace OLD=NEW ...] EXPORT...

What it changes:
  * TARGET_INFO_SYSTEM_ENV: Hostname -> gpu-host.
  * META_DATA_CAPTURE: *WORKING_DIR -> rec, DEVICE_DISPLAY_NAME -> vm,
    *USER_NAME -> '', any *ENV* / *ENVIRONMENT* entry -> ''.
  * META_DATA_EXPORT: EXPORT_USER -> ''.
  * every text value of every table: each --replace OLD (e.g. the host name,
    the repository's absolute path) -> NEW.
A SQLite file is VACUUMed afterwards so no old page keeps the old text.
Parquet files are rewritten only where something changed (needs pyarrow).
Prints the rows that still look like identity (host, user, home, path, token)
so a person can check them."""
import argparse, os, re, sqlite3, sys

NAMED = {  # (table, predicate on name) -> new value
    "TARGET_INFO_SYSTEM_ENV": [(lambda n: n == "Hostname", "gpu-host")],
    "META_DATA_CAPTURE": [
        (lambda n: n.endswith("WORKING_DIR"), "rec"),
        (lambda n: n == "DEVICE_DISPLAY_NAME", "vm"),
        (lambda n: n.endswith("USER_NAME"), ""),
    ],
    "META_DATA_EXPORT": [(lambda n: n == "EXPORT_USER", "")],
}
# META_DATA_CAPTURE rows dropped whole (the launch environment, one row a
# variable), except the variables ENV_KEEP lists: a per-rank export's rank is
# read from PROCESS_0:ENVIRONMENT_VARIABLE RANK=…
def drop_capture(n, v):
    if re.search(r"(^|:)ENV", n) is None and "ENVIRONMENT" not in n:
        return False
    var = v.split("=", 1)[0] if isinstance(v, str) and "=" in v else ""
    return not (var and ENV_KEEP.match(var))


DROP = {"META_DATA_CAPTURE": drop_capture}
# Environment blocks (TARGET_INFO_SYSTEM_ENV DeviceEnvironment, ';'-separated, and
# per-process blocks in StringIds, NUL-separated) keep only these variables; the
# rank variables stay, since a per-rank export's rank is read from them.
ENV_KEEP = re.compile(r"^(NV_|NVIDIA_|CUDA_|NCCL_|TORCH_|NVSHMEM_|XLA_|TF_CPP_|PYTHONUNBUFFERED$|LD_LIBRARY_PATH$|PWD$"
                      r"|RANK$|LOCAL_RANK$|WORLD_SIZE$|LOCAL_WORLD_SIZE$|GROUP_RANK$|OMPI_COMM_WORLD_(LOCAL_)?RANK$"
                      r"|PMI_RANK$|PMIX_RANK$|PALS_RANKID$|SLURM_PROCID$|SLURM_LOCALID$)")
ENV_ENTRY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def filter_env(v):
    """Return v with unlisted variables dropped when v is an environment block, else v."""
    for sep in ("\x00", ";"):
        parts = v.split(sep)
        if sep == ";" and sum(1 for x in parts if ENV_ENTRY.match(x)) < 5:
            continue
        if len(parts) < 2 or not ENV_ENTRY.match(parts[0]):
            continue
        kept = [x for x in parts if x and ENV_ENTRY.match(x) and ENV_KEEP.match(x.split("=", 1)[0])]
        return sep.join(kept) + (sep if sep == ";" and kept and v.endswith(";") else "")
    return v


SUSPECT = re.compile(r"(?i)hostname|\buser(name)?\b|/home/|/root\b|HOME=|PATH=|token|secret|password|api[_-]?key")


def sub_all(v, reps):
    v = filter_env(v)
    for old, new in reps:
        if old and old in v:
            v = v.replace(old, new)
    return v


def scrub_sqlite(path, reps):
    db = sqlite3.connect(path)
    cur = db.cursor()
    tables = [r[0] for r in cur.execute("select name from sqlite_master where type='table'")]
    changed = 0
    for t in tables:
        cols = [(r[1], (r[2] or "").upper()) for r in cur.execute(f'pragma table_info("{t}")')]
        names = [c for c, _ in cols]
        if t in NAMED and "name" in names and "value" in names:
            rows = cur.execute(f'select rowid, name, value from "{t}"').fetchall()
            for rid, n, v in rows:
                for pred, new in NAMED[t]:
                    if isinstance(n, str) and pred(n) and v != new:
                        cur.execute(f'update "{t}" set value=? where rowid=?', (new, rid))
                        changed += 1
        if t in DROP and "name" in names and "value" in names:
            for rid, n, v in cur.execute(f'select rowid, name, value from "{t}"').fetchall():
                if isinstance(n, str) and DROP[t](n, v):
                    cur.execute(f'delete from "{t}" where rowid=?', (rid,))
                    changed += 1
        for c, typ in cols:
            if typ not in ("TEXT", ""):
                continue
            for rid, v in cur.execute(f'select rowid, "{c}" from "{t}" where typeof("{c}")=\'text\'').fetchall():
                nv = filter_env(v)
                if nv != v:
                    cur.execute(f'update "{t}" set "{c}"=? where rowid=?', (nv, rid))
                    changed += 1
            for old, new in reps:
                if not old:
                    continue
                n = cur.execute(f'update "{t}" set "{c}" = replace("{c}", ?, ?) where typeof("{c}")=\'text\' and instr("{c}", ?) > 0',
                                (old, new, old)).rowcount
                changed += max(n, 0)
    db.commit()
    cur.execute("vacuum")
    # report what still looks like identity
    for t in tables:
        cols = [r[1] for r in cur.execute(f'pragma table_info("{t}")') if (r[2] or "").upper() in ("TEXT", "")]
        for c in cols:
            for (v,) in cur.execute(f'select "{c}" from "{t}" where typeof("{c}")=\'text\''):
                if SUSPECT.search(v) or any(old and old in v for old, _ in reps):
                    print(f"  check {os.path.basename(path)} {t}.{c}: {v[:160]!r}")
    db.close()
    print(f"scrubbed {path}: {changed} changes")


def scrub_parquetdir(path, reps):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    total = 0
    for fn in sorted(os.listdir(path)):
        if not fn.endswith(".parquet"):
            continue
        fp = os.path.join(path, fn)
        t = pq.read_table(fp)
        table = fn[: -len(".parquet")]
        cols, changed = {}, 0
        for name in t.column_names:
            col = t.column(name)
            if pa.types.is_dictionary(col.type):
                col = col.cast(col.type.value_type)
            if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                cols[name] = t.column(name)
                continue
            vals = col.to_pylist()
            new = [sub_all(v, reps) if isinstance(v, str) else v for v in vals]
            if table in NAMED and name == "value" and "name" in t.column_names:
                ns = t.column("name").to_pylist()
                for i, n in enumerate(ns):
                    for pred, nv in NAMED[table]:
                        if isinstance(n, str) and pred(n):
                            new[i] = nv
            diff = sum(1 for x, y in zip(vals, new) if x != y)
            changed += diff
            cols[name] = pa.array(new, type=col.type) if diff else t.column(name)
            for v in new:
                if isinstance(v, str) and (SUSPECT.search(v) or any(o and o in v for o, _ in reps)):
                    print(f"  check {os.path.basename(path)}/{fn}.{name}: {v[:160]!r}")
        out = pa.table(cols, metadata=t.schema.metadata)
        if table in DROP and "name" in t.column_names:
            vs = t.column("value").to_pylist() if "value" in t.column_names else [None] * t.num_rows
            keep = [not (isinstance(n, str) and DROP[table](n, v)) for n, v in zip(t.column("name").to_pylist(), vs)]
            if not all(keep):
                out = out.filter(pa.array(keep))
                changed += keep.count(False)
        if changed:
            pq.write_table(out, fp, compression="zstd")
            total += changed
    print(f"scrubbed {path}: {total} changes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replace", action="append", default=[], help="OLD=NEW, applied to every text value")
    ap.add_argument("exports", nargs="+")
    a = ap.parse_args()
    reps = []
    for r in a.replace:
        old, _, new = r.partition("=")
        if len(old) >= 3:  # never replace tiny strings everywhere
            reps.append((old, new))
    reps.sort(key=lambda x: -len(x[0]))
    for p in a.exports:
        if os.path.isdir(p):
            scrub_parquetdir(p, reps)
        else:
            scrub_sqlite(p, reps)


if __name__ == "__main__":
    sys.exit(main())
