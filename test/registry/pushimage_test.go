package registry

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/inplace-dev/inplace/test/images"
)

// TestPushImage: a program image built by test/images is served by its tag
// with its own digest and config, as a node pulls it.
func TestPushImage(t *testing.T) {
	r := start(t, Notify{})
	img, err := images.Pause(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	digest, err := r.PushImage(t.Context(), "inplace/pause", "3.10", img)
	if err != nil {
		t.Fatalf("PushImage: %v", err)
	}
	ref := r.Host() + "/inplace/pause:3.10"
	if digest != want.String() || headDigest(t, r, ref) != digest {
		t.Errorf("PushImage = %s, HEAD %s = %s; want the image's digest %s", digest, ref, headDigest(t, r, ref), want)
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(parsed, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := pulled.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Config.Entrypoint; len(got) != 1 || got[0] != "/pause" {
		t.Errorf("pulled entrypoint %v, want [/pause]", got)
	}
	if _, err := r.PushImage(t.Context(), "Bad Repo", "v1", img); err == nil {
		t.Error("PushImage to an invalid repository succeeded")
	}
}
