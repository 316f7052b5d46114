package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// A bad flag is named in the error, before anything is read or published
// (the kubeconfig given does not exist).
func TestValidationNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"resize without a quantity", []string{"resize", "deploy/web", "-c", "app"}, "--cpu or --memory is required"},
		{"resize cpu", []string{"resize", "deploy/web", "-c", "app", "--cpu", "lots"}, `--cpu: "lots" is not a quantity`},
		{"resize memory", []string{"resize", "deploy/web", "-c", "app", "--memory", "0"}, "--memory: must be more than zero"},
		{"resize deadline", []string{"resize", "deploy/web", "-c", "app", "--cpu", "1", "--deadline", "-5s"}, "--deadline: must not be negative"},
		{"resize container twice", []string{"resize", "deploy/web", "-c", "app,app", "--cpu", "1"}, "-c/--container: empty or named twice"},
		{"restart failure policy", []string{"restart", "deploy/web", "-c", "app", "--failure-policy", "Maybe"}, `--failure-policy: "Maybe" is not Fail or Ignore`},
		{"restart min started", []string{"restart", "deploy/web", "-c", "app", "--min-started-seconds", "-1"}, "--min-started-seconds: must not be negative"},
		{"restart container twice", []string{"restart", "deploy/web", "-c", "app", "-c", "app"}, "-c/--container: empty or named twice"},
		{"restart reason", []string{"restart", "deploy/web", "-c", "app", "--reason", strings.Repeat("x", 300)}, "--reason: at most 256 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runRoot(t, append(tc.args, "--kubeconfig", "/nonexistent")...)
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// -c means one thing in every command that has it: container names,
// repeated or comma-separated.
func TestContainerFlagOneMeaning(t *testing.T) {
	var paths [][]string
	walk(NewRoot(), func(c *cobra.Command) {
		if c.Flags().Lookup("container") != nil {
			paths = append(paths, strings.Fields(c.CommandPath())[1:])
		}
	})
	if len(paths) < 3 {
		t.Fatalf("-c on %v; want upgrade, restart and resize at least", paths)
	}
	for _, path := range paths {
		for _, args := range [][]string{{"-c", "app", "-c", "sidecar"}, {"-c", "app,sidecar"}, {"--container", "app", "--container=sidecar"}} {
			c, _, err := NewRoot().Find(path)
			if err != nil {
				t.Fatal(err)
			}
			if f := c.Flags().Lookup("container"); f.Shorthand != "c" {
				t.Errorf("%s: --container has -%s; want -c", c.CommandPath(), f.Shorthand)
			}
			if err := c.ParseFlags(args); err != nil {
				t.Fatalf("%s %v: %v", c.CommandPath(), args, err)
			}
			got, err := c.Flags().GetStringSlice("container")
			if err != nil {
				t.Fatalf("%s: %v", c.CommandPath(), err)
			}
			if diff := cmp.Diff([]string{"app", "sidecar"}, got); diff != "" {
				t.Errorf("%s %v (-want +got):\n%s", c.CommandPath(), args, diff)
			}
		}
	}
}
