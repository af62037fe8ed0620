//go:build unix

package nsys

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts cmd in a process group of its own and, when its
// context is done, kills the whole group: nsys forks helpers that would
// otherwise outlive it.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
