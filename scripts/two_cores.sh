#!/usr/bin/env bash
# On the GPU host (through the device tool, carrying .bench/ as for
# scripts/vs_nsys.sh): full analyze pinned to 2 cores vs C SQLite (Python's
# sqlite3 module) scanning the same columns, best of N.
set -euo pipefail
bin=.bench/nsysphase; [ -f $bin ] || xz -dk $bin.xz; chmod +x $bin
db=/tmp/li.sqlite; xz -dc .bench/large_interleaved.sqlite.xz > $db; cat $db >/dev/null
for i in 1 2 3 4 5; do rm -rf /tmp/o; /usr/bin/time -f "analyze 2 cores: %e s %U u %M KB" taskset -c 0,1 $bin analyze --quiet --out /tmp/o $db; done 2>&1 | grep analyze
python3 - "$db" <<'PY'
import sqlite3, sys, time
db = sys.argv[1]
qs = ['select total(start),total(end),total(globalTid),total(correlationId),total(nameId) from CUPTI_ACTIVITY_KIND_RUNTIME',
 'select total(start),total(end),total(globalPid),total(deviceId),total(correlationId),total(demangledName),total(graphNodeId) from CUPTI_ACTIVITY_KIND_KERNEL',
 'select total(start),total(end),total(globalPid),total(deviceId),total(bytes),total(copyKind),total(srcKind),total(dstKind),total(correlationId) from CUPTI_ACTIVITY_KIND_MEMCPY',
 'select total(start),total(end),total(eventType),total(globalTid),total(endGlobalTid),total(textId),total(domainId),sum(length(text)) from NVTX_EVENTS',
 'select count(*), sum(length(value)) from StringIds']
best = 1e9
for _ in range(5):
    c = sqlite3.connect('file:%s?immutable=1' % db, uri=True)
    t = time.time()
    for q in qs:
        c.execute(q).fetchall()
    best = min(best, time.time() - t)
    c.close()
print('C SQLite scan (python sqlite3 %s), best of 5: %.3f s' % (sqlite3.sqlite_version, best))
PY
