package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/inplace-dev/inplace/test/proc"
	"github.com/inplace-dev/inplace/test/stack"
)

// buildProject builds the inplace binary from the repository at root into
// dir, as a user would run it.
func buildProject(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "inplace")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/inplace")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/inplace: %w\n%s", err, out)
	}
	return bin, nil
}

// project is `inplace run` as separate processes against the world: the
// first runs the embedded NATS server, the others (replicas) connect to it
// with the same identities. Every replica runs every function, the pod
// watcher and a receiver; the registry's webhooks reach the first.
type project struct {
	dir     string
	procs   []*proc.Process
	addrs   []string // each replica's HTTP address
	natsURL string
	creds   string
	token   string // the receiver route's bearer token
}

// projectOptions say how to run the processes.
type projectOptions struct {
	bin, kubeconfig, registryHost, dir string
	replicas                           int
}

// startProject starts o.replicas `inplace run` processes with the
// binary's defaults (what a user gets) and waits until each is ready: its
// caches synced and its consumers pulling.
func startProject(ctx context.Context, o projectOptions) (*project, error) {
	p := &project{dir: o.dir, creds: filepath.Join(o.dir, "nats", "credentials")}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, err
	}
	token, err := stack.WriteHooks(o.dir, o.registryHost)
	if err != nil {
		return nil, err
	}
	p.token = token
	natsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	p.natsURL = fmt.Sprintf("nats://127.0.0.1:%d", natsPort)
	for i := range max(o.replicas, 1) {
		if err := p.startReplica(ctx, o, i, natsPort); err != nil {
			p.stop()
			return nil, err
		}
	}
	return p, nil
}

func (p *project) startReplica(ctx context.Context, o projectOptions, i, natsPort int) error {
	httpPort, err := freePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(httpPort)
	args := []string{"run",
		"--kubeconfig=" + o.kubeconfig,
		"--http-addr=" + addr,
		"--hooks-config=" + filepath.Join(o.dir, "hooks.yaml"),
		"--config-namespace=inplace-system",
	}
	if i == 0 {
		args = append(args, fmt.Sprintf("--nats-listen=127.0.0.1:%d", natsPort), "--nats-data-dir="+filepath.Join(o.dir, "nats"))
	} else {
		args = append(args, "--nats-url="+p.natsURL, "--nats-credentials="+p.creds)
	}
	pr, err := proc.Start(o.dir, fmt.Sprintf("inplace-%d", i), o.bin, args)
	if err != nil {
		return err
	}
	p.procs, p.addrs = append(p.procs, pr), append(p.addrs, addr)
	if err := waitReady(ctx, pr, "http://"+addr+"/readyz", 3*time.Minute); err != nil {
		return fmt.Errorf("inplace run #%d: %w%s", i, err, proc.Tails(30, pr))
	}
	return nil
}

// hooksURL is the receiver route of the first replica.
func (p *project) hooksURL() string { return "http://" + p.addrs[0] + "/hooks/" + stack.Route }

// pids are the processes' ids.
func (p *project) pids() []int {
	out := make([]int, 0, len(p.procs))
	for _, pr := range p.procs {
		out = append(out, pr.Pid())
	}
	return out
}

// stop ends every replica, the first (the NATS server) last.
func (p *project) stop() {
	for i := len(p.procs) - 1; i >= 0; i-- {
		p.procs[i].Stop(15 * time.Second)
	}
}

// waitReady polls url until it answers 200, the process exits, or limit.
func waitReady(ctx context.Context, pr *proc.Process, url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		if err := pr.ErrExited(); err != nil {
			return err
		}
		if resp, err := hc.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready at %s: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
