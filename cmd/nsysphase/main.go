// Command nsysphase turns Nsight Systems SQLite exports into per-phase answers.
package main

import (
	"os"

	"github.com/nsysphase/nsysphase/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
