// Package memtune tunes memory: SetMemoryTarget sets the garbage
// collector's targets of the nsysphase program from the size of its inputs.
// It changes process-wide settings and may start a goroutine that lives as
// long as the process, so only the program's entry (package cli, for
// cmd/nsysphase) calls it, never a library.
package memtune
