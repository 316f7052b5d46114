//go:build !linux

package proc

import (
	"os"
	"syscall"
)

// sysProcAttr has no process group or parent-death signal off Linux: a
// crashed test binary can leave the control plane running there.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// signalGroup terminates (or kills) the process pid.
func signalGroup(pid int, kill bool) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	if kill {
		_ = p.Kill()
		return
	}
	_ = p.Signal(os.Interrupt)
}
