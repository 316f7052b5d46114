package images

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/inplace-dev/inplace/test/eventually"
	"github.com/inplace-dev/inplace/test/images/settings"
)

// TestProgramImages: each program's image runs it from /<program> with
// its settings in the config env and a padding layer of DefaultPadding.
func TestProgramImages(t *testing.T) {
	srv := settings.Server{Version: "1.0.0", StartDelay: time.Second}
	tests := []struct {
		program Program
		build   func() (v1.Image, error)
		env     []string
		layers  int
	}{
		{AppProgram, func() (v1.Image, error) { return App(t.Context(), srv) },
			[]string{"PATH=/", "APP_VERSION=1.0.0", "APP_START_DELAY=1s"}, 2},
		{SidecarProgram, func() (v1.Image, error) { return Sidecar(t.Context(), srv) },
			[]string{"PATH=/", "SIDECAR_VERSION=1.0.0", "SIDECAR_START_DELAY=1s"}, 2},
		{InitProgram, func() (v1.Image, error) { return Init(t.Context(), settings.Init{Sleep: time.Second}) },
			[]string{"PATH=/", "INIT_SLEEP=1s", "INIT_EXIT_CODE=0"}, 2},
		{ProbeProgram, func() (v1.Image, error) { return Probe(t.Context()) }, []string{"PATH=/"}, 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.program), func(t *testing.T) {
			img, err := tt.build()
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			checkConfig(t, cf, tt.program, tt.env)
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Layers) != tt.layers {
				t.Fatalf("%d layers, want %d", len(m.Layers), tt.layers)
			}
			if tt.layers == 2 && (m.Layers[1].Size < DefaultPadding || m.Layers[1].Size > DefaultPadding+64<<10) {
				t.Errorf("padding layer of %d bytes, want about %d", m.Layers[1].Size, DefaultPadding)
			}
		})
	}
}

// TestAppImageDigests: the same settings give the same image, another
// version another image with another padding layer.
func TestAppImageDigests(t *testing.T) {
	digest := func(v string) (string, string) {
		img, err := App(t.Context(), settings.Server{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		m, _ := img.Manifest()
		return d.String(), m.Layers[1].Digest.String()
	}
	a, padA := digest("1")
	again, _ := digest("1")
	b, padB := digest("2")
	if a != again || a == b || padA == padB {
		t.Errorf("v1 %s, v1 again %s, v2 %s (padding %s, %s): want v1 stable, v2 different in image and padding", a, again, b, padA, padB)
	}
}

// TestAppProgram runs the app binary on the host: it answers the version
// its env sets and, on SIGTERM, keeps answering (readyz 503) for its stop
// delay and exits 0.
func TestAppProgram(t *testing.T) {
	stopDelay := 300 * time.Millisecond
	cmd, base := startServer(t, AppProgram, settings.Server{Version: "1.0.0", Listen: "127.0.0.1:0", StopDelay: stopDelay}.Env(settings.AppPrefix))
	eventually.Until(t, 30*time.Second, "ready", func() bool { return status(t, base+"/readyz") == http.StatusOK })
	if got := body(t, base+"/"); got != "1.0.0\n" {
		t.Errorf("GET / = %q, want 1.0.0", got)
	}
	stopped := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually.Until(t, 30*time.Second, "draining", func() bool { return status(t, base+"/readyz") == http.StatusServiceUnavailable })
	if got := body(t, base+"/"); got != "1.0.0\n" {
		t.Errorf("GET / while draining = %q, want 1.0.0", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("app exited with %v after SIGTERM, want 0", err)
	}
	if d := time.Since(stopped); d < stopDelay {
		t.Errorf("exited %s after SIGTERM, want at least the stop delay %s", d, stopDelay)
	}
}

// TestProgramExits: the programs that end do so with the code their
// settings ask for, and a bad setting fails naming the variable.
func TestProgramExits(t *testing.T) {
	tests := []struct {
		name    string
		program Program
		env     []string
		code    int
		stderr  string
	}{
		{"app crash", AppProgram, []string{"APP_CRASH=true", "APP_LISTEN=127.0.0.1:0"}, 1, "crashing at start"},
		{"app bad setting", AppProgram, []string{"APP_ERROR_RATE=2"}, 1, "APP_ERROR_RATE"},
		{"sidecar crash", SidecarProgram, []string{"SIDECAR_CRASH=1"}, 1, "crashing at start"},
		{"init", InitProgram, []string{"INIT_SLEEP=100ms"}, 0, "done"},
		{"init fails", InitProgram, []string{"INIT_SLEEP=0s", "INIT_EXIT_CODE=3"}, 3, "done"},
		{"probe without url", ProbeProgram, nil, 1, "PROBE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin, err := Binary(t.Context(), tt.program)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(t.Context(), bin)
			cmd.Env = tt.env
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != tt.code || !strings.Contains(string(out), tt.stderr) {
				t.Errorf("exit %v, output %q; want code %d and %q", err, out, tt.code, tt.stderr)
			}
		})
	}
}

// TestSidecarProgram: the sidecar answers its own version after its own
// start delay.
func TestSidecarProgram(t *testing.T) {
	started := time.Now()
	_, base := startServer(t, SidecarProgram, settings.Server{Version: "s1", Listen: "127.0.0.1:0", StartDelay: 200 * time.Millisecond}.Env(settings.SidecarPrefix))
	eventually.Until(t, 30*time.Second, "ready", func() bool { return status(t, base+"/readyz") == http.StatusOK })
	if d := time.Since(started); d < 200*time.Millisecond {
		t.Errorf("ready after %s, want the start delay 200ms", d)
	}
	if got := body(t, base+"/"); got != "s1\n" {
		t.Errorf("GET / = %q, want s1", got)
	}
}

// TestProbeProgram runs the probe binary against a local server: its
// /counts count the answers and their version; SIGTERM stops it (exit 0).
func TestProbeProgram(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(settings.VersionHeader, "7")
		fmt.Fprintln(w, "7")
	}))
	defer target.Close()
	env := settings.Probe{URL: target.URL, Rate: 100, Listen: "127.0.0.1:0"}.Env()
	cmd, base := start(t, ProbeProgram, env, `listen=(\S+)`)
	var counts struct {
		OK       int64
		Failed   int64
		Versions map[string]int64
	}
	eventually.Until(t, 30*time.Second, "10 answers counted", func() bool {
		decode(t, base+"/counts", &counts)
		return counts.OK >= 10
	})
	if counts.Failed != 0 || counts.Versions["7"] != counts.OK {
		t.Errorf("counts %+v, want no failures and every answer from version 7", counts)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("probe exited with %v, want 0", err)
	}
}

// startServer starts a server program with env and returns it and its
// base URL.
func startServer(t *testing.T, p Program, env []string) (*exec.Cmd, string) {
	t.Helper()
	return start(t, p, env, `msg=listening addr=(\S+)`)
}

// start starts program p with env and waits for the stderr line matching
// re, whose first group is the address it listens on.
func start(t *testing.T, p Program, env []string, re string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := Binary(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Env = env
	startAndWaitLine(t, cmd, "")
	addr := regexp.MustCompile(re)
	var m []string
	eventually.Until(t, 30*time.Second, "the listening address logged", func() bool {
		m = addr.FindStringSubmatch(cmd.Stderr.(*lineWaiter).text())
		return m != nil
	})
	return cmd, "http://" + m[1]
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func body(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func decode(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body(t, url)), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
