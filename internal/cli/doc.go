// Package cli wires the pipeline stages (nsys → phases → stats → export) into
// the nsysphase command line. Main takes arguments and writers and returns the
// exit status, so every command runs in tests exactly as from a shell:
// 0 success, 1 a gate failed (check, verdict), 2 unusable input or usage.
package cli
