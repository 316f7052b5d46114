package proc

import "syscall"

// sysProcAttr puts a child in its own process group (so Stop can kill what
// it spawns) and has the kernel kill it when this process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends SIGTERM (or SIGKILL) to the process group of pid.
func signalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, sig)
}
