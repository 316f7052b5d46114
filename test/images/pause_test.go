package images

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/test/eventually"
)

// TestPauseExitsOnSignal: pause runs until SIGTERM or SIGINT and then
// exits 0.
func TestPauseExitsOnSignal(t *testing.T) {
	bin, err := Binary(t.Context(), PauseProgram)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin)
			startAndWaitLine(t, cmd, "pause: waiting")
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("pause exited with %v after %s, want 0", err, sig)
			}
		})
	}
}

// TestPauseReapsOrphans: as PID 1 of a PID namespace, pause reaps an
// orphan that dies, so no zombie stays behind.
func TestPauseReapsOrphans(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a PID namespace")
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Skip("needs nsenter (util-linux)")
	}
	bin, err := Binary(t.Context(), PauseProgram)
	if err != nil {
		t.Fatal(err)
	}
	pause := exec.CommandContext(t.Context(), bin)
	pause.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	startAndWaitLine(t, pause, "pause: waiting")
	// A subshell in pause's namespace starts a sleep and exits: the sleep
	// is orphaned and becomes pause's child.
	out, err := exec.CommandContext(t.Context(), nsenter, "-t", strconv.Itoa(pause.Process.Pid), "-p", "--",
		"/bin/sh", "-c", "(sleep 600 </dev/null >/dev/null 2>&1 &)").CombinedOutput()
	if err != nil {
		t.Fatalf("nsenter: %v: %s", err, out)
	}
	var orphan int
	eventually.Until(t, 30*time.Second, "an orphan adopted by pause", func() bool {
		kids := children(t, pause.Process.Pid)
		orphan = first(kids)
		return len(kids) == 1
	})
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually.Until(t, 30*time.Second, "the killed orphan reaped", func() bool {
		return len(children(t, pause.Process.Pid)) == 0
	})
	if err := pause.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := pause.Wait(); err != nil {
		t.Errorf("pause exited with %v, want 0", err)
	}
}

// startAndWaitLine starts cmd and waits until it writes a line starting
// with prefix to stderr; the process is killed when the test ends.
func startAndWaitLine(t *testing.T, cmd *exec.Cmd, prefix string) {
	t.Helper()
	lw := &lineWaiter{prefix: prefix, seen: make(chan struct{})}
	cmd.Stderr = lw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case <-lw.seen:
	case <-t.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s wrote no line starting %q within 30s; stderr: %s", cmd.Path, prefix, lw.text())
	}
}

// lineWaiter is a writer that closes seen once a line starting with
// prefix was written.
type lineWaiter struct {
	prefix string
	seen   chan struct{}
	mu     sync.Mutex
	buf    bytes.Buffer
	done   bool
}

func (l *lineWaiter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.done {
		for line := range strings.Lines(l.buf.String()) {
			if strings.HasPrefix(line, l.prefix) && strings.HasSuffix(line, "\n") {
				l.done = true
				close(l.seen)
				break
			}
		}
	}
	return len(p), nil
}

func (l *lineWaiter) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// children lists the host PIDs whose parent is pid (zombies included),
// from /proc/*/stat.
func children(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		fields := bytes.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(fields[1])); err == nil && ppid == pid {
			kid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			kids = append(kids, kid)
		}
	}
	return kids
}

func first(s []int) int {
	if len(s) == 0 {
		return 0
	}
	return s[0]
}
