//go:build !linux

package memtune

// AdviseHugePages does nothing outside Linux.
func AdviseHugePages([]byte) {}
