package settings

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lookupOf is an os.LookupEnv over env entries.
func lookupOf(env []string) func(string) (string, bool) {
	m := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestServerRoundTrip(t *testing.T) {
	for _, prefix := range []string{AppPrefix, SidecarPrefix} {
		want := Server{Version: "1.2.3", Listen: "127.0.0.1:0", StartDelay: 1500 * time.Millisecond,
			StopDelay: 2 * time.Second, Crash: true, ErrorRate: 0.1, Latency: 5 * time.Millisecond}
		got, err := ParseServer(prefix, lookupOf(want.Env(prefix)), Server{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", prefix, diff)
		}
	}
}

// TestServerDefaultsAndOverride: unset variables keep the defaults; a
// later entry (the pod's env after the image's) wins.
func TestServerDefaultsAndOverride(t *testing.T) {
	env := append(Server{Version: "1.0.0"}.Env(AppPrefix), "APP_VERSION=2.0.0", "SIDECAR_VERSION=9")
	got, err := ParseServer(AppPrefix, lookupOf(env), DefaultApp)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Server{Version: "2.0.0", Listen: ":8080"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBadSettings(t *testing.T) {
	tests := []struct {
		name  string
		parse func(func(string) (string, bool)) error
		env   []string
		want  []string // each named in the error
	}{
		{"server", func(l func(string) (string, bool)) error { _, err := ParseServer(AppPrefix, l, DefaultApp); return err },
			[]string{"APP_START_DELAY=soon", "APP_ERROR_RATE=1.5", "APP_CRASH=maybe", "APP_STOP_DELAY=-1s"},
			[]string{"APP_START_DELAY", "APP_ERROR_RATE", "APP_CRASH", "APP_STOP_DELAY"}},
		{"init", func(l func(string) (string, bool)) error { _, err := ParseInit(l, DefaultInit); return err },
			[]string{"INIT_SLEEP=x", "INIT_EXIT_CODE=300"}, []string{"INIT_SLEEP", "INIT_EXIT_CODE"}},
		{"probe", func(l func(string) (string, bool)) error { _, err := ParseProbe(l, DefaultProbe); return err },
			[]string{"PROBE_RATE=0"}, []string{"PROBE_RATE", "PROBE_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(lookupOf(tt.env))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestInitAndProbeRoundTrip(t *testing.T) {
	wantInit := Init{Sleep: 250 * time.Millisecond, ExitCode: 3}
	gotInit, err := ParseInit(lookupOf(wantInit.Env()), DefaultInit)
	if err != nil || gotInit != wantInit {
		t.Errorf("init round trip = %+v, %v; want %+v", gotInit, err, wantInit)
	}
	wantProbe := Probe{URL: "http://web.ns.svc.cluster.local:8080/", Rate: 20, Timeout: 300 * time.Millisecond, Listen: ":8081"}
	gotProbe, err := ParseProbe(lookupOf(wantProbe.Env()), DefaultProbe)
	if err != nil || gotProbe != wantProbe {
		t.Errorf("probe round trip = %+v, %v; want %+v", gotProbe, err, wantProbe)
	}
}
