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

// TestVariant: a variant is an image of its own (another manifest and
// config digest) with the source's layers, size and programs.
func TestVariant(t *testing.T) {
	r := start(t, Notify{})
	digest, err := r.Push(t.Context(), "base", "v1", WithSize(64<<10))
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	want, err := r.Resolve(t.Context(), r.Host()+"/base:v1")
	if err != nil {
		t.Fatalf("Resolve base: %v", err)
	}
	got, err := r.Variant(t.Context(), "base", "v1", "team/new", "v1", "run", "team")
	if err != nil {
		t.Fatalf("Variant: %v", err)
	}
	if got == digest {
		t.Fatalf("Variant digest %s is the source's", got)
	}
	img, err := r.Resolve(t.Context(), r.Host()+"/team/new:v1")
	if err != nil {
		t.Fatalf("Resolve the variant: %v", err)
	}
	if img.Digest != got {
		t.Errorf("team/new:v1 resolves to %s, want %s", img.Digest, got)
	}
	want.Digest, img.Digest = "", ""
	if d := cmp.Diff(want.Programs, img.Programs); d != "" || img.Size-want.Size > 1024 || img.Size < want.Size {
		t.Errorf("variant size %d (base %d), programs (-base +variant):\n%s", img.Size, want.Size, d)
	}
}
