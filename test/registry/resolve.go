package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/inplace-dev/inplace/test/kubelet"
)

// ErrNotFound is wrapped by errors for a reference the registry does not
// hold (manifest or repository unknown); its text, "not found", is in the
// error message.
var ErrNotFound = errors.New("not found")

// Resolve does what a node's image pull does: it resolves ref
// ("<Host()>/repo:tag" or "<Host()>/repo@sha256:...") against this
// registry. Digest is what the reference points at (the index digest for a
// multi-platform image); Size (config plus compressed layers) and Crash
// (CrashLabel) come from the image, or the index's linux/amd64 image.
func (r *Registry) Resolve(ctx context.Context, ref string) (kubelet.Image, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return kubelet.Image{}, fmt.Errorf("resolve %s: %w", ref, err)
	}
	if got := parsed.Context().RegistryStr(); got != r.host {
		return kubelet.Image{}, fmt.Errorf("resolve %s: registry %s is not the test registry %s", ref, got, r.host)
	}
	opts := append(r.remoteOptions(ctx), remote.WithPlatform(defaultPlatform))
	desc, err := remote.Get(parsed, opts...)
	if err != nil {
		return kubelet.Image{}, wrapNotFound("resolve "+ref, err)
	}
	img, err := desc.Image()
	if err != nil {
		return kubelet.Image{}, wrapNotFound("resolve "+ref, err)
	}
	got, err := inspect(img)
	if err != nil {
		return kubelet.Image{}, wrapNotFound("resolve "+ref, err)
	}
	got.Digest = desc.Digest.String()
	return got, nil
}

// inspect returns the pull size of img, whether it carries
// CrashLabel=true, and its programs: every image of this registry holds
// one program, its entrypoint's (test/images), or none (random layers).
func inspect(img v1.Image) (kubelet.Image, error) {
	m, err := img.Manifest()
	if err != nil {
		return kubelet.Image{}, fmt.Errorf("manifest: %w", err)
	}
	size := m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return kubelet.Image{}, fmt.Errorf("config: %w", err)
	}
	progs := []string{}
	if ep := cf.Config.Entrypoint; len(ep) > 0 {
		progs = append(progs, ep[0])
	}
	return kubelet.Image{Size: size, Crash: cf.Config.Labels[CrashLabel] == "true", Programs: progs}, nil
}

// wrapNotFound prefixes err with op, wrapping ErrNotFound too when the
// registry answered 404.
func wrapNotFound(op string, err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s: %w: %w", op, ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
