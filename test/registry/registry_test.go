package registry

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/inplace-dev/inplace/test/kubelet"
)

// start starts a registry for the test and closes it when the test ends.
func start(t *testing.T, n Notify) *Registry {
	t.Helper()
	r, err := Start(t.Context(), Options{Notify: n, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// headDigest is the digest the registry serves for ref, asked independently
// of Resolve.
func headDigest(t *testing.T, r *Registry, ref string) string {
	t.Helper()
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatalf("parse %s: %v", ref, err)
	}
	desc, err := remote.Head(parsed, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("HEAD %s: %v", ref, err)
	}
	return desc.Digest.String()
}

func TestPushResolve(t *testing.T) {
	r := start(t, Notify{})
	tests := []struct {
		name           string
		opts           []PushOption
		crash          bool
		minSize, maxSz int64
	}{
		{name: "default", minSize: DefaultImageSize, maxSz: 16 << 10},
		{name: "crash", opts: []PushOption{WithCrash()}, crash: true, minSize: DefaultImageSize, maxSz: 16 << 10},
		{name: "one MiB in three layers", opts: []PushOption{WithSizeMB(1), WithLayers(3)}, minSize: 1 << 20, maxSz: 1<<20 + 64<<10},
		{name: "oci", opts: []PushOption{WithOCI(), WithLabel("a", "b")}, minSize: DefaultImageSize, maxSz: 16 << 10},
		{name: "multi-arch crash", opts: []PushOption{WithPlatforms("linux/amd64", "linux/arm64/v8"), WithCrash()}, crash: true, minSize: DefaultImageSize, maxSz: 16 << 10},
		{name: "multi-arch oci", opts: []PushOption{WithPlatforms("linux/arm64", "linux/amd64"), WithOCI()}, minSize: DefaultImageSize, maxSz: 16 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := "team/" + strings.ToLower(strings.ReplaceAll(tt.name, " ", "-"))
			digest, err := r.Push(t.Context(), repo, "v1", tt.opts...)
			if err != nil {
				t.Fatalf("Push: %v", err)
			}
			refs := []string{
				r.Host() + "/" + repo + ":v1",
				r.Host() + "/" + repo + "@" + digest,
				r.Host() + "/" + repo + ":v1@" + digest,
			}
			for _, ref := range refs {
				if got := headDigest(t, r, ref); got != digest {
					t.Errorf("HEAD %s = %s, Push returned %s", ref, got, digest)
				}
				img, err := r.Resolve(t.Context(), ref)
				if err != nil {
					t.Fatalf("Resolve(%s): %v", ref, err)
				}
				want := kubelet.Image{Digest: digest, Size: img.Size, Crash: tt.crash, Programs: []string{}}
				if diff := cmp.Diff(want, img); diff != "" {
					t.Errorf("Resolve(%s) (-want +got):\n%s", ref, diff)
				}
				if img.Size < tt.minSize || img.Size > tt.maxSz {
					t.Errorf("Resolve(%s).Size = %d, want in [%d, %d]", ref, img.Size, tt.minSize, tt.maxSz)
				}
			}
		})
	}
}

func TestPushTwiceGivesNewDigest(t *testing.T) {
	r := start(t, Notify{})
	first, err := r.Push(t.Context(), "app", "v1")
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	second, err := r.Push(t.Context(), "app", "v1")
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	if first == second {
		t.Fatalf("two pushes gave the same digest %s", first)
	}
	img, err := r.Resolve(t.Context(), r.Host()+"/app:v1")
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if img.Digest != second {
		t.Errorf("app:v1 resolves to %s, want the second push %s", img.Digest, second)
	}
}

func TestResolveErrors(t *testing.T) {
	r := start(t, Notify{})
	if _, err := r.Push(t.Context(), "app", "v1"); err != nil {
		t.Fatalf("Push: %v", err)
	}
	missingDigest := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name     string
		ref      string
		notFound bool
		contains string
	}{
		{name: "missing tag", ref: r.Host() + "/app:v2", notFound: true, contains: "not found"},
		{name: "missing repository", ref: r.Host() + "/nope:v1", notFound: true, contains: "not found"},
		{name: "missing digest", ref: r.Host() + "/app@" + missingDigest, notFound: true, contains: "not found"},
		{name: "other registry", ref: "docker.io/library/app:v1", contains: "is not the test registry"},
		{name: "no registry", ref: "app:v1", contains: "is not the test registry"},
		{name: "bad reference", ref: r.Host() + "/App:v1", contains: "resolve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(t.Context(), tt.ref)
			if err == nil {
				t.Fatalf("Resolve(%s) succeeded, want an error", tt.ref)
			}
			if got := errors.Is(err, ErrNotFound); got != tt.notFound {
				t.Errorf("errors.Is(%v, ErrNotFound) = %v, want %v", err, got, tt.notFound)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", err, tt.contains)
			}
		})
	}
}

func TestTag(t *testing.T) {
	r := start(t, Notify{})
	digest, err := r.Push(t.Context(), "app", "v1", WithCrash())
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	tagged, err := r.Tag(t.Context(), "app", "v1", "latest")
	if err != nil {
		t.Fatalf("Tag: %v", err)
	}
	if tagged != digest {
		t.Errorf("Tag returned %s, want %s", tagged, digest)
	}
	v1, err := r.Resolve(t.Context(), r.Host()+"/app:v1")
	if err != nil {
		t.Fatalf("Resolve v1: %v", err)
	}
	latest, err := r.Resolve(t.Context(), r.Host()+"/app:latest")
	if err != nil {
		t.Fatalf("Resolve latest: %v", err)
	}
	if diff := cmp.Diff(v1, latest); diff != "" {
		t.Errorf("latest differs from v1 (-v1 +latest):\n%s", diff)
	}
	if _, err := r.Tag(t.Context(), "app", "missing", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Tag of a missing tag: err = %v, want ErrNotFound", err)
	}
}

func TestDelete(t *testing.T) {
	r := start(t, Notify{})
	digest, err := r.Push(t.Context(), "app", "v1")
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	for _, tag := range []string{"v1-alias", "v1-other"} {
		if _, err := r.Tag(t.Context(), "app", "v1", tag); err != nil {
			t.Fatalf("Tag %s: %v", tag, err)
		}
	}
	steps := []struct {
		del      string
		resolves map[string]bool
	}{
		{del: "v1", resolves: map[string]bool{"app:v1": false, "app:v1-alias": true, "app@" + digest: true}},
		{del: digest, resolves: map[string]bool{"app:v1-alias": false, "app:v1-other": false, "app@" + digest: false}},
	}
	for _, s := range steps {
		if err := r.Delete(t.Context(), "app", s.del); err != nil {
			t.Fatalf("Delete(%s): %v", s.del, err)
		}
		for ref, want := range s.resolves {
			_, err := r.Resolve(t.Context(), r.Host()+"/"+ref)
			if got := err == nil; got != want {
				t.Errorf("after Delete(%s): Resolve(%s) err = %v, want resolvable %v", s.del, ref, err, want)
			}
			if err != nil && !errors.Is(err, ErrNotFound) {
				t.Errorf("after Delete(%s): Resolve(%s) err = %v, want ErrNotFound", s.del, ref, err)
			}
		}
	}
	if err := r.Delete(t.Context(), "app", "v1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of a deleted tag: err = %v, want ErrNotFound", err)
	}
}

// TestLayersPullIntact pulls every layer of a multi-MiB push back in full;
// go-containerregistry checks each blob against its digest while reading.
func TestLayersPullIntact(t *testing.T) {
	r := start(t, Notify{})
	digest, err := r.Push(t.Context(), "big", "v1", WithSizeMB(3), WithLayers(2))
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	ref, err := name.ParseReference(r.Host() + "/big@" + digest)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	img, err := remote.Image(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatalf("layers: %v", err)
	}
	var total int64
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatalf("layer: %v", err)
		}
		n, err := io.Copy(io.Discard, rc)
		if err != nil {
			t.Fatalf("read layer: %v", err)
		}
		if err := rc.Close(); err != nil {
			t.Fatalf("close layer: %v", err)
		}
		total += n
	}
	if total < 3<<20 {
		t.Errorf("pulled %d layer bytes, want at least 3 MiB", total)
	}
}
