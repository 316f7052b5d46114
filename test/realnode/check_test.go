package realnode_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/test/realnode"
)

// TestCheckNamesMissingBinaries: with a bin directory lacking the real
// nodes' binaries, Check fails with an UnavailableError naming each one
// and saying to run make bin.
func TestCheckNamesMissingBinaries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kubelet"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := realnode.Check(dir)
	var unavailable *realnode.UnavailableError
	if !errors.As(err, &unavailable) {
		t.Fatalf("Check = %v, want an UnavailableError", err)
	}
	for _, b := range []string{"kube-proxy", "coredns", "kube-scheduler"} {
		if !strings.Contains(err.Error(), filepath.Join(dir, b)) {
			t.Errorf("Check = %q, want %s named", err, b)
		}
	}
	if strings.Contains(err.Error(), filepath.Join(dir, "kubelet")+",") || !strings.Contains(err.Error(), "run `make bin`") {
		t.Errorf("Check = %q, want the present kubelet left out and `make bin` advised", err)
	}
}
