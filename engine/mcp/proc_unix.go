//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setGroup starts a stdio server in its own process group, so that the
// processes it starts can be stopped with it.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of a stdio server's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
