package fleethub_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// hub is a running `inplace run --fleet-hub`.
type hub struct {
	cmd  *exec.Cmd
	addr string
	logs *strings.Builder
}

// buildInplace builds the inplace binary into a temporary directory.
func buildInplace(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "inplace")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/inplace")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/inplace: %v\n%s", err, out)
	}
	return bin
}

var httpAddr = regexp.MustCompile(`msg="inplace running" .*http=(\S+)`)

// startHub runs bin as the fleet's hub on f.Hub and waits until it serves
// /readyz; it stops with the test.
func startHub(t *testing.T, bin string, f *world.Fleet, args ...string) *hub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--fleet-hub", "--nats-url", f.Hub.URL(),
		"--nats-credentials", f.HubCredentials, "--http-addr", "127.0.0.1:0", "--log-level", "debug"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &hub{cmd: cmd, logs: &strings.Builder{}}
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			h.logs.WriteString(sc.Text() + "\n")
			if m := httpAddr.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("hub's log:\n%s", h.logs.String())
		}
	})
	select {
	case h.addr = <-addr:
	case <-done:
		t.Fatalf("the hub stopped before it ran:\n%s", h.logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the hub did not start in 60s:\n%s", h.logs.String())
	}
	err = world.Eventually(t.Context(), 10*time.Second, "the hub ready", func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.addr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadHubFlagsNameTheFlag: the process refuses to start, naming the
// flag and the field.
func TestBadHubFlagsNameTheFlag(t *testing.T) {
	bin := buildInplace(t)
	bad := writeFile(t, "policy.yaml", "workloads: [Deployment/shop/web]\nstages:\n- name: staging\n  clusters: [Staging]\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fleet-hub"}, "--fleet-policy: required with --fleet-hub"},
		{[]string{"--fleet-hub", "--fleet-policy", bad}, "--fleet-policy " + bad + ": fleet policy: stages[0].clusters[0]"},
	} {
		out, err := exec.CommandContext(t.Context(), bin, append([]string{"run"}, tc.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("inplace run %v: %v\n%s\nwant %q", tc.args, err, out, tc.want)
		}
	}
}

func hubJS(t *testing.T, f *world.Fleet) jetstream.JetStream {
	t.Helper()
	nc, err := f.HubConn(busauth.Operator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// record reads push's fleet record on the hub (nil until it is there).
func record(ctx context.Context, js jetstream.JetStream) (*fleet.Record, error) {
	kv, err := js.KeyValue(ctx, fleetctl.Bucket)
	if err != nil {
		return nil, nil
	}
	keys, err := kv.Keys(ctx)
	if err != nil || len(keys) != 1 {
		return nil, nil
	}
	e, err := kv.Get(ctx, keys[0])
	if err != nil {
		return nil, err
	}
	var r fleet.Record
	return &r, json.Unmarshal(e.Value(), &r)
}

// released is how many releases member holds in its FLEET_IN.
func released(ctx context.Context, m *world.Member) (uint64, error) {
	nc, err := m.Conn(busauth.Operator)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	s, err := js.Stream(ctx, fleetnet.InStream)
	if err != nil {
		return 0, err
	}
	sub := fleetnet.PromotePush(m.Name)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(sub))
	if err != nil {
		return 0, err
	}
	return info.State.Subjects[sub], nil
}

func notify(t *testing.T, reg *registry.Registry, h *hub, token string) {
	t.Helper()
	err := reg.SetNotify(registry.Notify{URL: "http://" + h.addr + "/hooks/" + stack.Route,
		Headers: http.Header{"Authorization": {"Bearer " + token}}, Timeout: 5 * time.Second, Backoff: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
}
