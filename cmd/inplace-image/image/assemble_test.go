package image

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestAssembleIsReproducible: the same binary, base and commit make the
// same image digest; another commit time makes another.
func TestAssembleIsReproducible(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
	digest := func(created time.Time) v1.Hash {
		t.Helper()
		b, err := newBase(ca, created)
		if err != nil {
			t.Fatal(err)
		}
		img, err := assemble(b, Inplace("v1"), v1.Platform{OS: "linux", Architecture: "arm64"}, bin, Options{Revision: "r"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	first, second := digest(at), digest(at)
	if first != second {
		t.Errorf("two builds of the same input: %s and %s", first, second)
	}
	if other := digest(at.Add(time.Second)); other == first {
		t.Errorf("another commit time made the same digest %s", other)
	}
}
