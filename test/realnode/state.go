package realnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// StateDir holds a state file per pool running on the machine
// (slot-<n>.json), the lock serialising their changes, and what the first
// pool found before any ran (globals.json).
const StateDir = "/run/inplace-realnode"

// state is what a pool created, written before it creates it, so that a
// pool whose process died can be removed by the next one.
type state struct {
	Slot int `json:"slot"`
	// Pid and Started identify the owning process (Started is its start
	// time in clock ticks, so a reused pid is not taken for it).
	Pid     int    `json:"pid"`
	Started uint64 `json:"started"`
	// Dir holds every node's directories, network namespace files,
	// sockets and logs; every mount the pool makes is under it.
	Dir    string      `json:"dir"`
	Bridge bool        `json:"bridge,omitempty"`
	Nodes  []nodeState `json:"nodes,omitempty"`
}

type nodeState struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

func slotFile(slot int) string { return filepath.Join(StateDir, fmt.Sprintf("slot-%d.json", slot)) }

func (s *state) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp := slotFile(s.Slot) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp, slotFile(s.Slot)); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

func loadState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load state: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("load state %s: %w", path, err)
	}
	return &s, nil
}

// states lists the pools' state files.
func states() ([]*state, error) {
	paths, err := filepath.Glob(filepath.Join(StateDir, "slot-*.json"))
	if err != nil {
		return nil, fmt.Errorf("list pools: %w", err)
	}
	var out []*state
	for _, p := range paths {
		s, err := loadState(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// alive reports whether the pool's owning process still runs.
func (s *state) alive() bool {
	started, err := startTime(s.Pid)
	return err == nil && started == s.Started
}

// startTime is field 22 of /proc/<pid>/stat: when the process started.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command (field 2) is in parentheses and may hold spaces.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// lock takes the machine-wide lock of StateDir; the returned func drops it.
func lock() (func(), error) {
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", StateDir, err)
	}
	f, err := os.OpenFile(filepath.Join(StateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", StateDir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", StateDir, err)
	}
	return func() { f.Close() }, nil
}

// claimSlot writes a state file for this process in the first free slot.
func claimSlot(dir string) (*state, error) {
	me := os.Getpid()
	started, err := startTime(me)
	if err != nil {
		return nil, fmt.Errorf("claim slot: %w", err)
	}
	for slot := range MaxSlots {
		if _, err := os.Stat(slotFile(slot)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		s := &state{Slot: slot, Pid: me, Started: started, Dir: dir}
		return s, s.save()
	}
	return nil, fmt.Errorf("claim slot: all %d slots of %s are taken by running pools", MaxSlots, StateDir)
}
