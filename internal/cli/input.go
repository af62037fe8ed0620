package cli

import "github.com/nsysphase/nsysphase/internal/analysis"

// materialize and renamePath let commands accept .sqlite.xz inputs; see
// analysis.Materialize.
func materialize(path string) (string, func(), error) { return analysis.Materialize(path) }

func renamePath(err error, local, user string) error { return analysis.RenamePath(err, local, user) }
