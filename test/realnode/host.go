package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// Host is this machine prepared for a pool of real nodes: a slot of its
// own in StateDir and the host bridge carrying the pool's host address.
type Host struct {
	log       *slog.Logger
	mu        sync.Mutex // guards st
	st        *state
	closeOnce sync.Once
	unshare   func() // drops the machine's shared hold (share.go)
	closeErr  error
}

// Prepare removes the pools of test binaries that died without cleaning
// up, claims a slot and creates the host bridge. The API server of the
// cluster the nodes join must then listen on IP (see
// cluster.Options.BindAddress); Start runs the nodes; Close removes it all.
func Prepare(ctx context.Context, log *slog.Logger) (*Host, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	unshare, err := share()
	if err != nil {
		return nil, fmt.Errorf("prepare real nodes: %w", err)
	}
	h, err := prepare(ctx, log)
	if err != nil {
		unshare()
		return nil, err
	}
	h.unshare = unshare
	return h, nil
}

func prepare(ctx context.Context, log *slog.Logger) (*Host, error) {
	unlock, err := lock()
	if err != nil {
		return nil, fmt.Errorf("prepare real nodes: %w", err)
	}
	defer unlock()
	live, err := removeStale(log)
	if err != nil {
		return nil, fmt.Errorf("prepare real nodes: %w", err)
	}
	if live == 0 {
		if err := recordGlobals(); err != nil {
			return nil, fmt.Errorf("prepare real nodes: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "inplace-real-")
	if err != nil {
		return nil, fmt.Errorf("prepare real nodes: %w", err)
	}
	st, err := claimSlot(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("prepare real nodes: %w", err)
	}
	h := &Host{log: log, st: st}
	if err := h.createBridge(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("prepare real nodes: %w", err), h.closeLocked())
	}
	log.Info("real nodes: host prepared", "slot", st.Slot, "bridge", layout(st.Slot).bridge(), "ip", h.IP(), "dir", dir)
	return h, nil
}

// removeStale cleans up the pools whose process is gone and says how many
// pools still run. With none left, the globals the last one recorded are
// restored.
func removeStale(log *slog.Logger) (int, error) {
	all, err := states()
	if err != nil {
		return 0, err
	}
	live := 0
	var errs []error
	for _, s := range all {
		if s.alive() {
			live++
			continue
		}
		log.Info("real nodes: removing a pool left by a dead process", "slot", s.Slot, "pid", s.Pid, "dir", s.Dir)
		if err := cleanup(s); err != nil {
			errs = append(errs, fmt.Errorf("remove stale pool in slot %d: %w", s.Slot, err))
			continue
		}
		errs = append(errs, os.Remove(slotFile(s.Slot)))
	}
	if live == 0 && errors.Join(errs...) == nil {
		errs = append(errs, restoreGlobals())
	}
	return live, errors.Join(errs...)
}

func (h *Host) createBridge(ctx context.Context) error {
	l := layout(h.st.Slot)
	if err := h.update(func(s *state) { s.Bridge = true }); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"link", "add", l.bridge(), "type", "bridge"},
		{"addr", "add", l.hostIP() + "/24", "dev", l.bridge()},
		{"link", "set", l.bridge(), "up"},
	} {
		if err := run(ctx, ipCmd, args...); err != nil {
			return fmt.Errorf("host bridge: %w", err)
		}
	}
	return nil
}

// update changes the state and saves it before anything it names is
// created.
func (h *Host) update(f func(*state)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h.st)
	return h.st.save()
}

// IP is the pool's host address on the host bridge: the API server, the
// registries' forwards and CoreDNS listen there.
func (h *Host) IP() string { return layout(h.st.Slot).hostIP() }

// Slot is the pool's slot on the machine.
func (h *Host) Slot() int { return h.st.Slot }

// Dir holds the nodes' directories, sockets, network namespace files and
// logs.
func (h *Host) Dir() string { return h.st.Dir }

// Close removes everything the pool created (stop the nodes first for a
// graceful end; Close kills what still runs) and, when it is the last
// pool on the machine, restores the sysctls and removes the global paths
// the nodes created. Safe to call twice.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		unlock, err := lock()
		if err != nil {
			h.closeErr = fmt.Errorf("close real nodes: %w", err)
			return
		}
		defer unlock()
		h.closeErr = h.closeLocked()
		if h.unshare != nil {
			h.unshare()
		}
	})
	return h.closeErr
}

func (h *Host) closeLocked() error {
	h.mu.Lock()
	st := *h.st
	h.mu.Unlock()
	if os.Getenv("INPLACE_KEEP_CLUSTER") != "" {
		h.keepLogs()
	}
	err := cleanup(&st)
	if err != nil {
		return fmt.Errorf("close real nodes: %w (the state stays in %s for the next start to retry)", err, slotFile(st.Slot))
	}
	if err := os.Remove(slotFile(st.Slot)); err != nil {
		return fmt.Errorf("close real nodes: %w", err)
	}
	if _, err := removeStale(h.log); err != nil {
		return fmt.Errorf("close real nodes: %w", err)
	}
	h.log.Info("real nodes: host cleaned up", "slot", st.Slot)
	return nil
}

// keepLogs copies the pool's logs and configuration files to a directory
// of their own that outlives it (INPLACE_KEEP_CLUSTER); the rest goes.
func (h *Host) keepLogs() {
	keep, err := os.MkdirTemp("", "inplace-real-logs-")
	if err != nil {
		h.log.Warn("real nodes: keep logs", "err", err)
		return
	}
	for _, pattern := range []string{"*.log", "*/*.log", "*/*.json", "*/*.toml", "Corefile"} {
		files, _ := filepath.Glob(filepath.Join(h.st.Dir, pattern))
		for _, f := range files {
			rel, _ := filepath.Rel(h.st.Dir, f)
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			dst := filepath.Join(keep, rel)
			if err := writeFiles(map[string][]byte{dst: b}); err != nil {
				h.log.Warn("real nodes: keep logs", "err", err)
			}
		}
	}
	h.log.Info("real nodes: logs kept", "dir", keep)
	fmt.Fprintln(os.Stderr, "real nodes: logs kept in", keep)
}
