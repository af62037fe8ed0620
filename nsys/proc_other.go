//go:build !unix

package nsys

import "os/exec"

// killGroupOnCancel leaves exec's default: the process is killed when its
// context is done.
func killGroupOnCancel(*exec.Cmd) {}
