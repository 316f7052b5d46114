// Package proc runs the test world's subprocesses (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, hollow nodes): each with its
// output in a log file, in a process group of its own that dies with the
// test binary (on Linux), stopped with SIGTERM then SIGKILL.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Process is one subprocess with its output in a log file.
type Process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, valid once done is closed
}

// Start starts bin with args in dir, output to dir/<name>.log. env, when
// not nil, is added to this process's environment.
func Start(dir, name, bin string, args []string, env ...string) (*Process, error) {
	p := &Process{name: name, logPath: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.cmd = cmd
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// LogPath is the file holding the process's output.
func (p *Process) LogPath() string { return p.logPath }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ErrExited is a non-nil error naming the process when it has exited.
func (p *Process) ErrExited() error {
	if done, err := p.Exited(); done {
		return fmt.Errorf("%s exited: %v", p.name, err)
	}
	return nil
}

// Stop asks the process group to terminate, and kills it after grace. A nil
// Process is a no-op.
func (p *Process) Stop(grace time.Duration) {
	if p == nil || p.cmd == nil {
		return
	}
	if done, _ := p.Exited(); done {
		return
	}
	signalGroup(p.cmd.Process.Pid, false)
	select {
	case <-p.done:
	case <-time.After(grace):
		signalGroup(p.cmd.Process.Pid, true)
		<-p.done
	}
}

// Kill kills the process group at once (SIGKILL), as a crash would.
func (p *Process) Kill() {
	if p == nil || p.cmd == nil {
		return
	}
	signalGroup(p.cmd.Process.Pid, true)
	<-p.done
}

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Tails formats the log tails of procs for an error message; nil entries
// are skipped.
func Tails(n int, procs ...*Process) string {
	var sb strings.Builder
	for _, p := range procs {
		if p == nil {
			continue
		}
		fmt.Fprintf(&sb, "\n--- %s (%s), last %d lines ---\n%s\n", p.name, p.logPath, n, p.Tail(n))
	}
	return sb.String()
}
