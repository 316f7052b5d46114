package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/inplace-dev/inplace/test/cluster"
)

// The inplace binary installed as kubectl-inplace on PATH is a kubectl
// plugin: the real kubectl (bin/kubectl, built by `make bin` from
// k8s.io/kubectl) finds it through its plugin discovery, and `kubectl
// inplace status` runs it with kubectl's flags (--context, -n,
// --request-timeout, $KUBECONFIG) passed through.
func TestKubectlPlugin(t *testing.T) {
	bins, err := cluster.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(bins, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("%s: %v; run `make bin`, which builds it from test/tools", kubectl, err)
	}
	path := t.TempDir()
	build := exec.CommandContext(t.Context(), "go", "build", "-o", filepath.Join(path, "kubectl-inplace"), "./cmd/inplace")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/inplace: %v\n%s", err, out)
	}

	e := newEnv(t)
	e.push("api", "1.0.0")
	digest := e.push("api", "1.1.0")
	e.deploy(workload{name: "api", replicas: 2, image: e.ref("api", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor"}})
	if out, err := e.inplace(append([]string{"upgrade", "deploy/api", "-n", e.ns, "--image", e.ref("api", "1.1.0"),
		"--timeout", "3m"}, e.conn()...)...); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out)
	}
	kc := e.w.Cluster.Kubeconfig()
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing of the machine's: its PATH, HOME (~/.kube) and kubectl.
	env := []string{"PATH=" + path, "HOME=" + t.TempDir(), "KUBECONFIG=" + kc}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	if out := run("plugin", "list"); !strings.Contains(out, filepath.Join(path, "kubectl-inplace")) {
		t.Errorf("kubectl plugin list does not find kubectl-inplace:\n%s", out)
	}
	out := run(append([]string{"inplace", "status", "--all", "-n", e.ns}, e.bus()...)...)
	if rows := linesWith(out, "Deployment/"+e.ns+"/api", "Completed"); len(rows) != 1 {
		t.Errorf("kubectl inplace status --all shows no completed rollout of api:\n%s", out)
	}
	out = run(append([]string{"inplace", "status", "deploy/api", "-n", e.ns, "--context", cfg.CurrentContext,
		"--request-timeout", "10s"}, e.bus()...)...)
	if pods := linesWith(out, "api-", "@"+digest); len(pods) != 2 {
		t.Errorf("kubectl inplace status deploy/api shows %d pods on %s; want 2:\n%s", len(pods), digest, out)
	}
}
