# nsysphase — build, test, benchmark, lint.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -s -w -X github.com/nsysphase/nsysphase/internal/cli.version=$(VERSION)

.PHONY: build static test test-long test-scans test-short golden bench lint deadcode fuzz interop clean

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/nsysphase ./cmd/nsysphase

# Static Linux binaries to carry to the GPU host (scripts/vs_nsys.sh,
# two_cores.sh, scale_device.sh): xz them into .bench/ as nsysphase.xz and
# scaleexport.xz.
static:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/nsysphase-linux-amd64 ./cmd/nsysphase
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "-s -w" -o bin/scaleexport-linux-amd64 ./internal/cmd/scaleexport

# The README's test command: every test, including the DuckDB interop test
# when interop/node_modules exists (make interop installs it). About 1.5 CPU
# minutes after the build: under a minute on an idle 2-core machine, no
# package over 35 s (docs/performance.md, "Test suite").
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# The large export's slowest cross-checks (page reader against SQLite, the
# streamed engine against the whole trace), 10–15 s on 2 cores; CI runs
# them after make test. Skipped where ../shared lacks the large export.
# Then the coverage suite of docs/statistics.md §10–§12 (seeded simulations
# that assert coverage and false-alarm rates within their Monte Carlo
# error), about 20 minutes on 2 cores.
# The long checks: the page scans and the sweep against SQLite on every
# fixture (test-scans, a few minutes; CI runs it), then every coverage
# simulation of docs/statistics.md (NSYSPHASE_COVERAGE=full: about 20
# minutes on 2 cores; CI runs the NSYSPHASE_COVERAGE=1 suite inside make test).
test-long: test-scans
	NSYSPHASE_COVERAGE=full $(GO) test -count=1 -timeout 60m ./stats/...

test-scans:
	NSYSPHASE_LONG=1 $(GO) test -count=1 -run 'TestPageScansEqualSQLite|TestSweepEqualsWholeTrace' ./nsys ./phases

test-short:
	$(GO) test -short ./...

# Rewrites the golden files of every command's renderings
# (internal/cli/testdata/golden/, TestGolden) after a change meant to alter
# the output; review their diff before committing.
golden:
	$(GO) test -count=1 -run '^TestGolden$$' ./internal/cli -update

interop:
	cd interop && npm ci --no-audit --no-fund

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	./scripts/bench.sh

lint:
	$(GO) tool -modfile=tools.mod golangci-lint run ./...

# Functions no program and no test reaches (x/tools deadcode, pinned in
# tools.mod); fails when it finds any.
deadcode:
	@out=$$($(GO) tool -modfile=tools.mod deadcode -test ./...) && if [ -n "$$out" ]; then echo "$$out"; exit 1; fi

fuzz:
	./scripts/fuzz.sh

clean:
	rm -rf bin
