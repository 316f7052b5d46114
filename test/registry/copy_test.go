package registry

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCopy: an image copied to another repository, by tag or by digest
// alone, resolves there to the same digest, size and crash label; a missing
// source is ErrNotFound.
func TestCopy(t *testing.T) {
	r := start(t, Notify{})
	digest, err := r.Push(t.Context(), "base", "v1", WithSize(64<<10), WithCrash())
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	want, err := r.Resolve(t.Context(), r.Host()+"/base:v1")
	if err != nil {
		t.Fatalf("Resolve base: %v", err)
	}
	for _, tc := range []struct{ repo, tag, ref string }{
		{"team/app", "v1", "/team/app:v1"},
		{"team/other", "", "/team/other@" + digest},
	} {
		got, err := r.Copy(t.Context(), "base", "v1", tc.repo, tc.tag)
		if err != nil || got != digest {
			t.Fatalf("Copy to %s %q = %s, %v; want %s", tc.repo, tc.tag, got, err, digest)
		}
		img, err := r.Resolve(t.Context(), r.Host()+tc.ref)
		if err != nil {
			t.Fatalf("Resolve %s: %v", tc.ref, err)
		}
		if diff := cmp.Diff(want, img); diff != "" {
			t.Errorf("%s (-base +copy):\n%s", tc.ref, diff)
		}
	}
	if _, err := r.Copy(t.Context(), "base", "missing", "x", "v1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Copy of a missing tag: err = %v, want ErrNotFound", err)
	}
}
