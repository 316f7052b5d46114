package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// proc is one control-plane subprocess with its output in a log file.
type proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, valid once done is closed
}

// startProc starts bin with args, output to dir/<name>.log, in a process
// group of its own that dies with this process (on Linux).
func startProc(dir, name, bin string, args []string) (*proc, error) {
	p := &proc{name: name, logPath: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
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

// exited reports whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the process group to terminate, and kills it after grace.
func (p *proc) stop(grace time.Duration) {
	if p == nil || p.cmd == nil {
		return
	}
	if done, _ := p.exited(); done {
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

// tail returns the last n lines of the process's log.
func (p *proc) tail(n int) string {
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

// tails formats the log tails of procs for an error message.
func tails(n int, procs ...*proc) string {
	var sb strings.Builder
	for _, p := range procs {
		if p == nil {
			continue
		}
		fmt.Fprintf(&sb, "\n--- %s (%s), last %d lines ---\n%s\n", p.name, p.logPath, n, p.tail(n))
	}
	return sb.String()
}
