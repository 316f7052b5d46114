package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFewestReplicas(t *testing.T) {
	const two = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: 2}\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\nspec: {replicas: 3}\n"
	if n, err := fewestReplicas(strings.NewReader(two)); err != nil || n != 2 {
		t.Errorf("fewestReplicas = %d, %v; want 2", n, err)
	}
	const unset = two + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: c}\nspec: {}\n"
	if n, err := fewestReplicas(strings.NewReader(unset)); err != nil || n != 1 {
		t.Errorf("with replicas unset: %d, %v; want 1", n, err)
	}
	if _, err := fewestReplicas(strings.NewReader("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")); err == nil {
		t.Error("no Deployment: want an error")
	}
}

func TestReplicasUnavailable(t *testing.T) {
	root := t.TempDir()
	if got := replicasUnavailable(root); !strings.Contains(got, "cannot tell") {
		t.Errorf("no manifest: %q", got)
	}
	write := func(n string) {
		dir := filepath.Join(root, "config", "plain")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		m := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: " + n + "}\n"
		if err := os.WriteFile(filepath.Join(dir, "functions.yaml"), []byte(m), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1")
	if got := replicasUnavailable(root); !strings.Contains(got, "not on main yet") {
		t.Errorf("1 replica: %q", got)
	}
	t.Setenv("INPLACE_BENCH_FORCE_REPLICAS", "1")
	if got := replicasUnavailable(root); got != "" {
		t.Errorf("forced: %q", got)
	}
	t.Setenv("INPLACE_BENCH_FORCE_REPLICAS", "")
	write("2")
	if got := replicasUnavailable(root); got != "" {
		t.Errorf("2 replicas: %q", got)
	}
	// The repository's own manifest parses.
	if n, err := fewestReplicasOf(t, "../../"+replicasManifest); err != nil || n < 1 {
		t.Errorf("%s: %d, %v", replicasManifest, n, err)
	}
}

func fewestReplicasOf(t *testing.T, path string) (int32, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return fewestReplicas(f)
}
