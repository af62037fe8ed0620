#!/usr/bin/env bash
# On the GPU host (from the repository root, with .rec/libdw and bin/ carried):
# records a small real .nsys-rep (profiler_step.py, 5 steps), exports it once
# by hand, then runs nsys's TestNsysRepRealReport (bin/nsys.test, built here
# with `CGO_ENABLED=0 go test -c -o bin/nsys.test ./nsys`) and
# `nsysphase info/analyze REPORT.nsys-rep` (bin/nsysphase-linux-amd64, from
# `make static`). Logs land in $OUT.
source scripts/record/lib.sh
for x in bin/*.xz; do [ -f "$x" ] && xz -dkf "$x"; done; chmod +x bin/nsys.test bin/nsysphase-linux-amd64
cp testdata/recording/profiler_step.py "$W/"
(cd "$W" && "$NSYS" profile --force-overwrite=true -o tiny -t cuda,nvtx --sample=none --cpuctxsw=none \
    python3 profiler_step.py --steps 5 >"$W/tiny.profile.log" 2>&1) || { tail -20 "$W/tiny.profile.log"; exit 1; }
"$NSYS" export --type sqlite --force-overwrite=true -o "$W/tiny.sqlite" "$W/tiny.nsys-rep" >/dev/null
export NSYS NSYSPHASE_TEST_REPORT="$W/tiny.nsys-rep" NSYSPHASE_TEST_EXPORT="$W/tiny.sqlite"
(cd nsys && ../bin/nsys.test -test.run 'TestNsysRepRealReport' -test.v -test.count=1) 2>&1 | tee "$OUT/nsysrep_test.log"
export XDG_CACHE_HOME="$W/cache"
{
  echo "\$ nsysphase info tiny.nsys-rep"; bin/nsysphase-linux-amd64 info --top 3 "$W/tiny.nsys-rep"; echo "exit $?"
  echo "\$ nsysphase analyze tiny.nsys-rep"; bin/nsysphase-linux-amd64 analyze --quiet "$W/tiny.nsys-rep"; echo "exit $?"
  echo "beside the report:"; ls "$W" | grep '^tiny'
  echo "cache:"; find "$XDG_CACHE_HOME" -type f | sed "s#$W#W#"
} 2>&1 | tee "$OUT/nsysrep_cli.log"
