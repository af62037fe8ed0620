// Command badgen writes the robustness corpus to a directory, for
// reproducing a case by hand:
//
//	go run ./internal/badgen/cmd/badgen -o /tmp/bad            # every case but the slow ones
//	go run ./internal/badgen/cmd/badgen -o /tmp/bad -slow      # and the pathological sizes
//	go run ./internal/badgen/cmd/badgen -o /tmp/bad nvtx_null_end stale_wal
//	go run ./internal/badgen/cmd/badgen -committed testdata/bad  # rewrite the committed small files
//
// Each generated case goes to its own subdirectory, named after the case.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nsysphase/nsysphase/internal/badgen"
	"github.com/nsysphase/nsysphase/internal/fixture"
)

func main() {
	out := flag.String("o", "", "directory to write the generated cases into")
	slow := flag.Bool("slow", false, "also build the pathological sizes (about 100 MB, several seconds)")
	committed := flag.String("committed", "", "write the committed small inputs into this directory and exit")
	base := flag.String("fixture", badgen.BaseFixture, "bundled fixture to derive cases from")
	flag.Parse()
	if err := run(*out, *committed, *base, *slow, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "badgen:", err)
		os.Exit(1)
	}
}

func run(out, committed, base string, slow bool, names []string) error {
	if committed != "" {
		return badgen.WriteCommitted(committed)
	}
	if out == "" {
		return fmt.Errorf("-o DIR is required (see the package doc)")
	}
	fx := fixture.Fixture{Name: base, XZ: filepath.Join(fixture.TestdataDir(), base+".sqlite.xz")}
	basePath, err := fx.Decompress()
	if err != nil {
		return fmt.Errorf("decompress fixture %s: %w", base, err)
	}
	if len(names) == 0 {
		for _, g := range badgen.Generators() {
			if slow || !g.Slow {
				names = append(names, g.Name)
			}
		}
	}
	for _, name := range names {
		dir := filepath.Join(out, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		p, err := badgen.Build(name, dir, basePath)
		if err != nil {
			return err
		}
		fmt.Println(p)
	}
	return nil
}
