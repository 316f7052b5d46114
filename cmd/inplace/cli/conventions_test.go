package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/test/registry"
)

// runRoot runs the real root command (root.go wiring included).
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// walk calls fn on every command under root.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// kubectl's conventions hold for every command: -n/--namespace is the
// namespace of the workloads (never inplace's own), --config-namespace
// inplace's, and -o offers json and yaml wherever it exists.
func TestKubectlConventionsOnEveryCommand(t *testing.T) {
	root := NewRoot()
	seen := map[string]bool{}
	walk(root, func(c *cobra.Command) {
		if ns := c.Flags().Lookup("namespace"); ns != nil && !ns.Hidden {
			seen["namespace"] = true
			if ns.Shorthand != "n" || strings.Contains(ns.Usage, "config-inplace") {
				t.Errorf("%s: --namespace is %q (-%s); want -n, the workloads' namespace", c.CommandPath(), ns.Usage, ns.Shorthand)
			}
		}
		if cn := c.Flags().Lookup("config-namespace"); cn != nil {
			seen["config-namespace"] = true
		}
		if o := c.Flags().Lookup("output"); o != nil {
			seen["output"] = true
			if o.Shorthand != "o" || !strings.Contains(o.Usage, "json") || !strings.Contains(o.Usage, "yaml") {
				t.Errorf("%s: -o is %q; want json and yaml among its formats", c.CommandPath(), o.Usage)
			}
		}
	})
	for _, f := range []string{"namespace", "config-namespace", "output"} {
		if !seen[f] {
			t.Errorf("no command has --%s", f)
		}
	}
	for _, cmd := range [][]string{{"plan"}, {"upgrade"}, {"replay"}, {"run"}} {
		c, _, err := root.Find(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if c.Flags().Lookup("config-namespace") == nil {
			t.Errorf("%s has no --config-namespace", c.CommandPath())
		}
	}
	for _, cmd := range [][]string{{"plan"}, {"upgrade"}, {"undo"}, {"restart"}, {"resize"}, {"status"}} {
		c, _, _ := root.Find(cmd)
		if f := c.Flags().ShorthandLookup("n"); f == nil || f.Name != "namespace" {
			t.Errorf("%s: no -n/--namespace", c.CommandPath())
		}
	}
}

// Every operator command that reads the cluster takes kubectl's own
// cluster flags (k8s.io/cli-runtime's), so a kubeconfig, context, user or
// impersonation works as it does with kubectl, and kubectl's global flags
// pass through `kubectl inplace`. `inplace run` keeps its own
// (--kubeconfig, else in-cluster).
func TestKubectlClusterFlags(t *testing.T) {
	kubectl := []string{"kubeconfig", "context", "cluster", "user", "as", "as-group", "request-timeout",
		"server", "token", "insecure-skip-tls-verify", "certificate-authority", "client-certificate", "client-key",
		"tls-server-name", "cache-dir"}
	n := 0
	walk(NewRoot(), func(c *cobra.Command) {
		if c.Flags().Lookup("kubeconfig") == nil || c.Name() == "run" {
			return
		}
		n++
		for _, name := range kubectl {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("%s has no --%s", c.CommandPath(), name)
			}
		}
	})
	if n < 7 {
		t.Errorf("%d commands take cluster flags; want plan, upgrade, undo, restart, resize, status and replay", n)
	}
}

// The shell completion scripts are cobra's, and -o completes its values.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, err := runRoot(t, "completion", shell)
		if err != nil || !strings.Contains(out, "inplace") || len(out) < 1000 {
			t.Errorf("completion %s: %v, %d bytes", shell, err, len(out))
		}
	}
	out, err := runRoot(t, cobra.ShellCompRequestCmd, "trace", "-o", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tree", "table", "json", "yaml"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("trace -o completes %q; want %s among them", out, want)
		}
	}
	out, err = runRoot(t, cobra.ShellCompRequestCmd, "upgrade", "state")
	if err != nil || !strings.Contains(out, "statefulset/") {
		t.Errorf("upgrade KIND/NAME completes %q (%v); want statefulset/", out, err)
	}
}

// --help says where things are: the listen address of `inplace function`
// and that `inplace run` honours KUBECONFIG as kubectl does.
func TestHelpSaysWhere(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"function", []string{"LISTEN_ADDRESS", ":8080"}},
		{"run", []string{"$KUBECONFIG", "in-cluster", "--config-namespace"}},
		{"trace", []string{"Without an argument, trace lists the recent upgrades"}},
	} {
		out, err := runRoot(t, tc.cmd, "--help")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("inplace %s --help lacks %q:\n%s", tc.cmd, w, out)
			}
		}
	}
	if _, err := runRoot(t, "run", "--namespace", "x", "--help"); err != nil {
		t.Errorf("run --namespace (the old name, kept hidden) is refused: %v", err)
	}
}

// trace without an argument lists the recent upgrades (before: cobra's bare
// "accepts 1 arg(s), received 0").
func TestTraceWithoutArgumentListsUpgrades(t *testing.T) {
	w := newToolWorld(t)
	web, api := rolloutFor("web", "1.3.0", true), rolloutFor("api", "2.0.0", false)
	w.publish(t, chain(t, web))
	w.publish(t, chain(t, api))
	out, _, err := w.run(t.Context(), t, "", "trace")
	if err != nil {
		t.Fatalf("trace: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "UPGRADE") || len(lines) < 3 {
		t.Fatalf("trace lists:\n%s", out)
	}
	for _, want := range []struct{ id, workload, result string }{
		{web.UpgradeID(), "Deployment/shop/web", "halted"},
		{api.UpgradeID(), "Deployment/shop/api", "completed"},
	} {
		got := linesWith(out, want.id)
		if len(got) != 1 || !strings.Contains(got[0], want.workload) || !strings.Contains(got[0], want.result) {
			t.Errorf("line of %s: %q; want %s %s", want.id, got, want.workload, want.result)
		}
	}
	raw, _, err := w.run(t.Context(), t, "", "trace", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ups []history.Upgrade
	if err := yaml.Unmarshal([]byte(raw), &ups); err != nil || len(ups) != 2 {
		t.Errorf("trace -o yaml: %v, %d upgrades:\n%s", err, len(ups), raw)
	}
}

// -o yaml and -o json say the same thing, for status and trace.
func TestYAMLOutput(t *testing.T) {
	w := newToolWorld(t)
	web := rolloutFor("web", "1.3.0", false)
	evs := chain(t, web)
	w.publish(t, evs)
	for _, args := range [][]string{{"trace", web.UpgradeID()}, {"status", "--all"}, {"events", "tail", "--all"}} {
		asJSON, _, err := runAll(t, w, len(evs), append(args, "-o", "json")...)
		if err != nil {
			t.Fatal(err)
		}
		asYAML, _, err := runAll(t, w, len(evs), append(args, "-o", "yaml")...)
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(strings.TrimPrefix(asYAML, "---\n"), "---\n")
		jsons := strings.Split(strings.TrimSpace(asJSON), "\n")
		if args[0] != "events" {
			docs, jsons = []string{asYAML}, []string{asJSON}
		}
		if len(docs) != len(jsons) {
			t.Fatalf("%v: %d YAML documents, %d JSON ones", args, len(docs), len(jsons))
		}
		for i := range docs {
			j, err := yaml.YAMLToJSON([]byte(docs[i]))
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := errors.Join(json.Unmarshal(j, &a), json.Unmarshal([]byte(jsons[i]), &b)); err != nil {
				t.Fatal(err)
			}
			if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
				t.Errorf("%v: document %d differs:\nyaml %s\njson %s", args, i, ja, jb)
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// runAll runs a command; one that follows the stream (events tail) until
// it printed n events, one line (JSON) or document (YAML) each.
func runAll(t *testing.T, w *toolWorld, n int, args ...string) (string, string, error) {
	t.Helper()
	if args[0] != "events" {
		return w.run(t.Context(), t, "", args...)
	}
	buf := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.runTo(ctx, buf, &bytes.Buffer{}, "", args...) }()
	waitFor(t, buf, fmt.Sprintf("%d events", n), func(s string) bool {
		return strings.Count(s, "\n{")+strings.Count(s, "---\n")+boolInt(strings.HasPrefix(s, "{")) >= n
	})
	cancel()
	return buf.String(), "", <-done
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A tag the registry does not have is an error naming the tags it has, and
// nothing is started (before: a warning, and a rollout that could only fail).
func TestUpgradeRefusesAMissingTag(t *testing.T) {
	reg, err := registry.Start(t.Context(), registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	for _, tag := range []string{"1.0.0", "1.1.0"} {
		if _, err := reg.Push(t.Context(), "shop/web", tag); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := resolveDigest(t.Context(), reg.Host()+"/shop/web:1.1.0"); err != nil || !strings.HasPrefix(d, "sha256:") {
		t.Fatalf("resolve an existing tag: %q %v", d, err)
	}
	// inplace undo checks the image it goes back to, tag@digest, the same way.
	gone := reg.Host() + "/shop/web:1.0.0@sha256:" + strings.Repeat("0", 64)
	if _, err := resolveDigest(t.Context(), gone); !errors.Is(err, errNoSuchImage) ||
		!strings.Contains(err.Error(), "the registry "+reg.Host()+" has no manifest sha256:"+strings.Repeat("0", 64)+" of shop/web") {
		t.Errorf("resolve a digest the registry does not have: %v", err)
	}
	for _, tc := range []struct{ image, want string }{
		{reg.Host() + "/shop/web:9.9.9", "the registry " + reg.Host() + " has no tag 9.9.9 of shop/web; it has 1.1.0, 1.0.0"},
		{reg.Host() + "/shop/nothing:1.0.0", "has no repository shop/nothing"},
	} {
		if _, err := resolveDigest(t.Context(), tc.image); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resolve %s: %v; want %q", tc.image, err, tc.want)
		}
		out, err := runRoot(t, "upgrade", "deployment/web", "-n", "shop", "--image", tc.image,
			"--kubeconfig", "/nonexistent", "--nats-url", "nats://127.0.0.1:1")
		if err == nil || !errors.Is(err, errNoSuchImage) || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "nothing was started") {
			t.Errorf("upgrade to %s: %v\n%s; want %q", tc.image, err, out, tc.want)
		}
	}
}
