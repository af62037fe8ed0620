package nsys

// Pid returns the OS process id packed in a globalTid or globalPid.
func Pid(global int64) int64 { return (global >> 24) & 0xFFFFFF }

// Tid returns the OS thread id packed in a globalTid.
func Tid(global int64) int64 { return global & 0xFFFFFF }

// ProcessKey returns the globalPid of a globalTid (its thread bits cleared):
// the process part of a join key, unique across VMs and hosts in one export.
func ProcessKey(global int64) int64 { return global &^ 0xFFFFFF }
