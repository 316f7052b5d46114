package docs

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/inplace-dev/inplace/cmd/inplace/cli"
)

// fakeHome stands for the home directory in defaults derived from it.
const fakeHome = "/nonexistent-home"

// flagRow is one flag as a table shows it.
type flagRow struct {
	name, def, usage string
}

func (r flagRow) String() string {
	return fmt.Sprintf("| %s | %s | %s |", r.name, r.def, cell(r.usage))
}

// rows are the table rows of rs, by flag name; raw leaves the usage as is.
func rows(rs []flagRow, raw bool) string {
	slices.SortFunc(rs, func(a, b flagRow) int {
		return strings.Compare(longName(a.name)+a.usage, longName(b.name)+b.usage)
	})
	var b strings.Builder
	for _, r := range rs {
		if raw {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", r.name, r.def, r.usage)
		} else {
			b.WriteString(r.String() + "\n")
		}
	}
	return b.String()
}

// longName is the --name of a table's flag cell.
func longName(cell string) string {
	_, long, _ := strings.Cut(cell, "`--")
	return long
}

func rowOf(f *pflag.Flag) flagRow {
	name := "`--" + f.Name + "`"
	if f.Shorthand != "" {
		name = "`-" + f.Shorthand + "`, " + name
	}
	def := f.DefValue
	switch {
	case def == "" || def == "[]" || (f.Value.Type() == "bool" && def == "false"):
		def = ""
	default:
		def = "`" + strings.Replace(def, fakeHome, "~", 1) + "`"
	}
	return flagRow{name: name, def: def, usage: f.Usage}
}

// commandFlags is one command's flags.
type commandFlags struct {
	cmd   *cobra.Command
	flags []*pflag.Flag
}

// commands walks the command tree: every command a user may run, with the
// flags it takes (help left out).
func commands(c *cobra.Command) []commandFlags {
	var out []commandFlags
	if c.Runnable() && c.HasParent() {
		var fs []*pflag.Flag
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !f.Hidden {
				fs = append(fs, f)
			}
		})
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !f.Hidden {
				fs = append(fs, f)
			}
		})
		out = append(out, commandFlags{c, fs})
	}
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		out = append(out, commands(sub)...)
	}
	return out
}

// clusterFlagNames are kubectl's cluster flags (k8s.io/cli-runtime).
func clusterFlagNames() map[string]bool {
	fs := pflag.NewFlagSet("cluster", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
}

// cleanEnv unsets what the commands take their flags' defaults from, so
// the tables are the same on every machine.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "INPLACE_") || k == "KUBECONFIG" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("HOME", fakeHome)
}

// flagsSection is the commands, and the flags of each: kubectl's cluster
// flags and the flags several commands share once, then each command's own.
func flagsSection(t *testing.T) string {
	cleanEnv(t)
	cmds := commands(cli.NewRoot())
	cluster := clusterFlagNames()
	// A flag is shared when at least two commands have it, each the same.
	seen := map[string]map[flagRow][]string{}
	for _, c := range cmds {
		for _, f := range c.flags {
			r := rowOf(f)
			if seen[f.Name] == nil {
				seen[f.Name] = map[flagRow][]string{}
			}
			seen[f.Name][r] = append(seen[f.Name][r], c.cmd.CommandPath())
		}
	}
	shared := func(f *pflag.Flag) bool { return len(seen[f.Name][rowOf(f)]) >= 2 }
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.cmd.CommandPath(), anchorOf(c.cmd.CommandPath()), cell(c.cmd.Short))
	}
	var clusterRows, sharedRows []flagRow
	done := map[flagRow]bool{}
	for _, c := range cmds {
		for _, f := range c.flags {
			r := rowOf(f)
			if done[r] || !shared(f) {
				continue
			}
			done[r] = true
			if cluster[f.Name] {
				clusterRows = append(clusterRows, r)
				continue
			}
			r.usage = cell(r.usage) + " | " + commandList(seen[f.Name][r])
			sharedRows = append(sharedRows, r)
		}
	}
	b.WriteString("\n### Cluster flags\n\nkubectl's own (k8s.io/cli-runtime), the same on every command that talks to the API server.\n\n")
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n" + rows(clusterRows, false))
	b.WriteString("\n### Shared flags\n\n| flag | default | meaning | commands |\n|---|---|---|---|\n" + rows(sharedRows, true))
	for _, c := range cmds {
		writeCommand(&b, c, cluster, shared)
	}
	return b.String()
}

// writeCommand writes one command's heading, usage and own flags.
func writeCommand(b *strings.Builder, c commandFlags, cluster map[string]bool, shared func(*pflag.Flag) bool) {
	fmt.Fprintf(b, "\n### %s\n\n%s\n\n```\n%s\n```\n", c.cmd.CommandPath(), cell(c.cmd.Short), c.cmd.UseLine())
	var own []flagRow
	var hasCluster bool
	var common []string
	for _, f := range c.flags {
		switch {
		case shared(f) && cluster[f.Name]:
			hasCluster = true
		case shared(f):
			common = append(common, "`--"+f.Name+"`")
			slices.Sort(common)
		default:
			own = append(own, rowOf(f))
		}
	}
	if len(own) > 0 {
		b.WriteString("\n| flag | default | meaning |\n|---|---|---|\n" + rows(own, false))
	}
	var also []string
	if hasCluster {
		also = append(also, "the [cluster flags](#cluster-flags)")
	}
	if len(common) > 0 {
		also = append(also, "the [shared flags](#shared-flags) "+strings.Join(common, ", "))
	}
	if len(also) > 0 {
		fmt.Fprintf(b, "\nAlso %s.\n", strings.Join(also, "; "))
	}
}

// commandList names commands without the binary's name.
func commandList(paths []string) string {
	var out []string
	for _, p := range paths {
		out = append(out, strings.TrimPrefix(p, "inplace "))
	}
	if len(out) > 6 {
		return fmt.Sprintf("%d commands", len(out))
	}
	return strings.Join(out, ", ")
}
