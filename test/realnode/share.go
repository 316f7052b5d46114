package realnode

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// A pool holds the machine's share lock (StateDir/share.lock) shared from
// Prepare to Close; Alone takes it exclusively, so that a test comparing
// the whole machine before and after its own pool sees no other pool's
// processes, mounts or sysctls, even when go test runs packages in
// parallel. A process that holds it exclusively (or a child started with
// AloneEnv, which inherits the hold) starts pools without the shared
// hold: the exclusive one already keeps every other pool out.

// AloneEnv, set to 1 in a child's environment by a process holding Alone,
// lets the child start pools while its parent keeps the machine.
const AloneEnv = "INPLACE_REALNODE_ALONE"

var alone struct {
	sync.Mutex
	held bool
}

func shareLockFile() (*os.File, error) {
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(StateDir, "share.lock"), os.O_CREATE|os.O_RDWR, 0o600)
}

// Alone waits until no other pool runs on the machine, removes the pools
// of processes that died (and so restores the sysctls they changed), and
// keeps new ones from starting (in other processes) until the returned
// func is called.
func Alone(log *slog.Logger) (func(), error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := shareLockFile()
	if err != nil {
		return nil, fmt.Errorf("have the machine alone: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("have the machine alone: %w", err)
	}
	unlock, err := lock()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("have the machine alone: %w", err)
	}
	live, err := removeStale(log)
	unlock()
	if err == nil && live > 0 {
		err = fmt.Errorf("%d pools run without holding %s (a binary built before it had one?)", live, f.Name())
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("have the machine alone: %w", err)
	}
	alone.Lock()
	alone.held = true
	alone.Unlock()
	return func() {
		alone.Lock()
		alone.held = false
		alone.Unlock()
		f.Close()
	}, nil
}

// share takes the shared hold a running pool keeps; the returned func
// drops it. Without a hold of its own (this process or its parent has
// the machine alone) it returns a no-op.
func share() (func(), error) {
	alone.Lock()
	held := alone.held
	alone.Unlock()
	if held || os.Getenv(AloneEnv) == "1" {
		return func() {}, nil
	}
	f, err := shareLockFile()
	if err != nil {
		return nil, fmt.Errorf("share the machine: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("share the machine: %w", err)
	}
	return func() { f.Close() }, nil
}
