package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

const hubPolicy = `workloads: [Deployment/shop/web]
stages:
- name: staging
  clusters: [staging]
- name: prod
  clusters: [prod-eu, prod-us]
  approval: true
`

// TestFleetHubIsChecked: --fleet-hub needs a policy that parses, whose
// clusters can be members; the error names the flag and the field; a hub
// runs the receiver alone (the default --functions narrowed, a function of
// the chain refused); --fleet-hub and --fleet-policy come from the
// environment too.
func TestFleetHubIsChecked(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good.yaml", hubPolicy)
	for _, tc := range []struct {
		name string
		args []string
		err  string
	}{
		{"a hub", []string{"--fleet-hub", "--fleet-policy", good}, ""},
		{"no policy", []string{"--fleet-hub"}, "--fleet-policy: required with --fleet-hub"},
		{"a policy without the hub", []string{"--fleet-policy", good}, "--fleet-policy: only with --fleet-hub"},
		{"hub and member", []string{"--fleet-hub", "--fleet-policy", good, "--fleet-member", "prod-eu"}, "--fleet-hub and --fleet-member"},
		{"a missing file", []string{"--fleet-hub", "--fleet-policy", filepath.Join(dir, "none.yaml")}, "--fleet-policy: open"},
		{"a bad field", []string{"--fleet-hub", "--fleet-policy", file("bad.yaml", strings.Replace(hubPolicy, "prod-us", "Prod_US", 1))},
			"stages[1].clusters[1]: want lower-case"},
		{"an unknown field", []string{"--fleet-hub", "--fleet-policy", file("unknown.yaml", hubPolicy+"order: fast\n")},
			`unknown field "order"`},
		{"a cluster named hub", []string{"--fleet-hub", "--fleet-policy", file("hub.yaml", strings.Replace(hubPolicy, "[staging]", "[hub]", 1))},
			"stages[0].clusters[0]: fleet cluster \"hub\": the hub's domain"},
		{"a chain function", []string{"--fleet-hub", "--fleet-policy", good, "--functions", "receiver,compute-spec"},
			`--functions: a fleet hub runs receiver only (the members run the chain), not "compute-spec"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Process
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			if err := BindFlags(fs, &p); err != nil {
				t.Fatal(err)
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := p.Validate()
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{"receiver"}, p.Functions); diff != "" || p.WatchPods {
					t.Errorf("a hub's functions (-want +got):\n%s; pod watcher %v", diff, p.WatchPods)
				}
				if len(p.Fleet.Stages) != 2 || !p.Fleet.Stages[1].Approval {
					t.Errorf("policy read: %+v", p.Fleet)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Validate = %v, want %q", err, tc.err)
			}
			if strings.HasPrefix(tc.err, "stages") && !strings.Contains(err.Error(), "--fleet-policy "+dir) {
				t.Errorf("Validate = %v, want the flag and its file named", err)
			}
		})
	}
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv("INPLACE_FLEET_HUB", "true")
		t.Setenv("INPLACE_FLEET_POLICY", good)
		var p Process
		if err := BindFlags(pflag.NewFlagSet("run", pflag.ContinueOnError), &p); err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil || !p.FleetHub || len(p.Fleet.Workloads) != 1 {
			t.Errorf("INPLACE_FLEET_HUB, INPLACE_FLEET_POLICY: %v, %+v", err, p.Fleet)
		}
	})
}
