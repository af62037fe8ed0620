package cli

import (
	"github.com/nsysphase/nsysphase/internal/analysis"
	"github.com/nsysphase/nsysphase/internal/base/memtune"
)

// tuneMemory sets the process's garbage-collector targets for the inputs of
// cfg (package memtune): a program's decision, so the library never does it.
func tuneMemory(cfg analysis.Config) {
	if files, _, err := analysis.ExpandInputs(cfg.Files, cfg.FileArms); err == nil {
		memtune.SetMemoryTarget(files)
	}
}
