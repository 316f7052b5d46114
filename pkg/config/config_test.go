package config

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"knative.dev/pkg/configmap"
	"sigs.k8s.io/yaml"
)

func readConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	raw, err := os.ReadFile("../../config/core/config-inplace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	return &cm
}

// The _example block documents exactly the defaults, and its checksum
// annotation is current (knative.dev/pkg convention).
func TestExampleIsTheDefaults(t *testing.T) {
	cm := readConfigMap(t)
	example := cm.Data[configmap.ExampleKey]
	var data map[string]string
	if err := yaml.Unmarshal([]byte(example), &data); err != nil {
		t.Fatalf("_example is not YAML: %v", err)
	}
	got, err := ParseDefaults(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(StandardDefaults(), got); diff != "" {
		t.Errorf("_example differs from StandardDefaults (-want +got):\n%s", diff)
	}
	for _, key := range []string{"max-unavailable", "grace-seconds", "prepull", "verify-seconds",
		"prepull-namespace", "prepull-per-node", "prepull-timeout", "emit-cdevents", "cluster"} {
		if _, ok := data[key]; !ok {
			t.Errorf("_example does not document %s", key)
		}
	}
	if want := configmap.Checksum(example); cm.Annotations[configmap.ExampleChecksumAnnotation] != want {
		t.Errorf("example checksum annotation = %q; want %q", cm.Annotations[configmap.ExampleChecksumAnnotation], want)
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    func(*Defaults)
		wantErr string
	}{
		{"empty is standard", nil, func(*Defaults) {}, ""},
		{"percent budget", map[string]string{"max-unavailable": "25%"}, func(d *Defaults) {
			d.Policy.MaxUnavailable = intstr.FromString("25%")
		}, ""},
		{"all keys", map[string]string{"grace-seconds": "5", "prepull": "false", "verify-seconds": "60",
			"prepull-namespace": "ops", "prepull-per-node": "1", "prepull-timeout": "90s", "emit-cdevents": "false"},
			func(d *Defaults) {
				d.Policy.GraceSeconds, d.Policy.Prepull, d.Policy.VerifySeconds = 5, false, 60
				d.PrepullNamespace, d.PrepullPerNode, d.PrepullTimeout, d.EmitCDEvents = "ops", 1, 90*time.Second, false
			}, ""},
		{"bad int", map[string]string{"grace-seconds": "five"}, nil, `"grace-seconds"`},
		{"negative grace", map[string]string{"grace-seconds": "-1"}, nil, "grace-seconds"},
		{"bad budget", map[string]string{"max-unavailable": "lots"}, nil, "max-unavailable"},
		{"bad duration", map[string]string{"prepull-timeout": "soon"}, nil, `"prepull-timeout"`},
		{"zero per node", map[string]string{"prepull-per-node": "0"}, nil, "prepull-per-node"},
		{"cluster", map[string]string{"cluster": "prod-eu"}, func(d *Defaults) { d.Cluster = "prod-eu" }, ""},
		{"bad cluster", map[string]string{"cluster": "Prod.EU"}, nil, "cluster: want lower-case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDefaults(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want it to name %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := StandardDefaults()
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStoreKeepsLastGoodConfig(t *testing.T) {
	var logs bytes.Buffer
	s := NewStore(StandardDefaults(), slog.New(slog.NewTextHandler(&logs, nil)))
	s.OnConfigMap(&corev1.ConfigMap{Data: map[string]string{"grace-seconds": "7"}})
	if got := s.Load().Policy.GraceSeconds; got != 7 {
		t.Fatalf("grace = %d; want 7", got)
	}
	s.OnConfigMap(&corev1.ConfigMap{Data: map[string]string{"grace-seconds": "x"}})
	if got := s.Load().Policy.GraceSeconds; got != 7 {
		t.Errorf("an invalid update replaced the good config: grace = %d", got)
	}
	if !strings.Contains(logs.String(), "grace-seconds") {
		t.Errorf("the rejected update was not logged with its key: %s", logs.String())
	}
}

func TestBindFlagsFromEnvAndValidate(t *testing.T) {
	t.Setenv("INPLACE_NATS_URL", "nats://nats.example:4222")
	t.Setenv("INPLACE_WORKERS", "9")
	t.Setenv("INPLACE_FUNCTIONS", "verify,patch-pod")
	var p Process
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	if err := BindFlags(fs, &p); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--ack-wait=45s"}); err != nil {
		t.Fatal(err)
	}
	if p.NATSURL != "nats://nats.example:4222" || p.Workers != 9 || p.Bus.AckWait != 45*time.Second {
		t.Errorf("parsed %+v", p)
	}
	if diff := cmp.Diff([]string{"verify", "patch-pod"}, p.Functions); diff != "" {
		t.Errorf("functions (-want +got):\n%s", diff)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	p.Functions = []string{"verfy"}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "--functions") {
		t.Errorf("bad function accepted: %v", err)
	}
}

func TestBindFlagsNamesABadVariable(t *testing.T) {
	t.Setenv("INPLACE_WORKERS", "many")
	err := BindFlags(pflag.NewFlagSet("run", pflag.ContinueOnError), &Process{})
	if err == nil || !strings.Contains(err.Error(), "INPLACE_WORKERS") {
		t.Errorf("err = %v; want it to name INPLACE_WORKERS", err)
	}
}

// --trusted-proxies (INPLACE_TRUSTED_PROXIES) lists the receiver's proxies,
// comma-separated; the flag wins over the variable.
func TestTrustedProxiesFlag(t *testing.T) {
	t.Setenv("INPLACE_TRUSTED_PROXIES", "10.0.0.0/8,192.168.1.1")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"10.0.0.0/8", "192.168.1.1"}},
		{[]string{"--trusted-proxies=172.16.0.0/12", "--trusted-proxies=2001:db8::/32"}, []string{"172.16.0.0/12", "2001:db8::/32"}},
	} {
		var p Process
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		if err := BindFlags(fs, &p); err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, p.TrustedProxies); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
	}
}

// A fleet member's name is one a cluster can have in a fleet, or the
// process refuses to start, naming the flag.
func TestFleetMemberIsChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"prod-eu", true}, {"", true}, {"Prod.EU", false}, {"hub", false}} {
		var p Process
		if err := BindFlags(pflag.NewFlagSet("run", pflag.ContinueOnError), &p); err != nil {
			t.Fatal(err)
		}
		p.FleetMember = tc.name
		err := p.Validate()
		if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "--fleet-member")) {
			t.Errorf("--fleet-member=%q: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestPinnedTTLFlag(t *testing.T) {
	for _, tc := range []struct {
		name, arg string
		want      time.Duration
		err       string
	}{
		{name: "default", want: 10 * time.Second},
		{name: "set", arg: "--pinned-ttl=20s", want: 20 * time.Second},
		{name: "too short", arg: "--pinned-ttl=1s", want: time.Second, err: "--pinned-ttl: 1s is too short (at least 3s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Process
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			if err := BindFlags(fs, &p); err != nil {
				t.Fatal(err)
			}
			var args []string
			if tc.arg != "" {
				args = append(args, tc.arg)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			if p.Bus.PinnedTTL != tc.want {
				t.Errorf("PinnedTTL = %s, want %s", p.Bus.PinnedTTL, tc.want)
			}
			err := p.Validate()
			if got := fmt.Sprint(err); (tc.err == "" && err != nil) || (tc.err != "" && got != tc.err) {
				t.Errorf("Validate: %v, want %q", err, tc.err)
			}
		})
	}
}
