// Command pause is the pause container of a pod sandbox: it holds the
// pod's namespaces by sleeping until SIGTERM or SIGINT, then exits 0. As
// PID 1 of a pod sharing its process namespace it reaps orphans that
// exit, so none stay zombies. It writes one line to stderr once its
// signal handlers are in place.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	os.Stderr.WriteString("pause: waiting for SIGTERM or SIGINT\n")
	for s := range sigs {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap waits for every child that has exited, without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
