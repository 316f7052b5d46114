package install_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/world"
)

// user runs the commands a user would, with the cluster's kubeconfig,
// from a directory of its own.
type user struct {
	t                *testing.T
	dir              string
	env              []string
	kubectl, inplace string
}

func newUser(t *testing.T, w *world.World) *user {
	t.Helper()
	bins, err := cluster.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	u := &user{t: t, dir: t.TempDir(), kubectl: filepath.Join(bins, "kubectl")}
	// A user's shell, not the make running the tests: without make's
	// variables, a make the user runs prints no make[1] lines.
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES":
		default:
			u.env = append(u.env, kv)
		}
	}
	u.env = append(u.env, "KUBECONFIG="+w.Cluster.Kubeconfig())
	u.inplace = filepath.Join(u.dir, "inplace")
	u.run(moduleRoot, "go", "build", "-o", u.inplace, "./cmd/inplace")
	return u
}

func (u *user) run(dir, name string, args ...string) string {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, u.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		u.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// statusCompleted runs step 5's inplace status --all through kubectl
// port-forward svc/nats (a local port of its choosing) until it shows the
// workload's rollout Completed (its template synced).
func (u *user) statusCompleted(ctx context.Context, workload string, args ...string) {
	u.t.Helper()
	local := u.portForward(ctx)
	var out []byte
	err := world.Eventually(ctx, 2*time.Minute, "inplace status: "+workload+" Completed", func(ctx context.Context) (bool, error) {
		cmd := exec.CommandContext(ctx, u.inplace, append([]string{"status", "--all", "--nats-url", "nats://" + local,
			"--nats-credentials", "./creds", "--request-timeout", "10s"}, args...)...)
		cmd.Dir, cmd.Env = u.dir, u.env
		var err error
		out, err = cmd.CombinedOutput()
		return len(linesWith(string(out), workload, "Completed")) == 1, err
	})
	if err != nil {
		u.t.Errorf("%v; inplace status --all:\n%s", err, out)
	}
}

// portForward runs kubectl port-forward svc/nats until the test ends and
// returns the local address it listens on.
func (u *user) portForward(ctx context.Context) string {
	u.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	pf := exec.CommandContext(ctx, u.kubectl, "-n", system, "port-forward", "svc/nats", ":4222")
	pf.Env = u.env
	stdout, err := pf.StdoutPipe()
	if err != nil {
		u.t.Fatal(err)
	}
	if err := pf.Start(); err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() { cancel(); _ = pf.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		// Forwarding from 127.0.0.1:38211 -> 4222
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "Forwarding" && strings.HasPrefix(f[2], "127.0.0.1:") {
			go func() {
				for sc.Scan() {
				}
			}()
			return f[2]
		}
	}
	u.t.Fatalf("kubectl port-forward svc/nats printed no local address: %v", sc.Err())
	return ""
}

// linesWith are the lines of out holding every one of subs.
func linesWith(out string, subs ...string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			lines = append(lines, l)
		}
	}
	return lines
}
