package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DefaultImageSize is the total layer size of a pushed image unless
// WithSize or WithSizeMB says otherwise: a few KB keeps pushes fast.
const DefaultImageSize = 2 << 10

// PushOption changes what Push builds.
type PushOption func(*pushConfig)

type pushConfig struct {
	size      int64
	layers    int
	labels    map[string]string
	platforms []v1.Platform
	oci       bool
	err       error
}

// WithSize sets the total uncompressed layer size in bytes; random content
// barely compresses, so the pushed (compressed) size is about the same.
func WithSize(bytes int64) PushOption {
	return func(c *pushConfig) { c.size = bytes }
}

// WithSizeMB sets the total layer size in MiB, for modelling pull time.
func WithSizeMB(mb int64) PushOption { return WithSize(mb << 20) }

// WithLayers splits the image's size over n layers (default 1).
func WithLayers(n int) PushOption {
	return func(c *pushConfig) { c.layers = n }
}

// WithLabel sets an image config label.
func WithLabel(key, value string) PushOption {
	return func(c *pushConfig) { c.labels[key] = value }
}

// WithCrash marks the image as one whose containers crash: it sets
// CrashLabel=true in the config (of every platform image of an index).
func WithCrash() PushOption { return WithLabel(CrashLabel, "true") }

// WithPlatforms pushes a multi-platform index instead of a single image:
// one random image per platform ("os/arch[/variant]"), each pushed by
// digest, then the index by tag, as docker buildx does.
func WithPlatforms(platforms ...string) PushOption {
	return func(c *pushConfig) {
		for _, s := range platforms {
			p, err := v1.ParsePlatform(s)
			if err != nil {
				c.err = fmt.Errorf("platform %q: %w", s, err)
				return
			}
			c.platforms = append(c.platforms, *p)
		}
	}
}

// WithOCI uses OCI media types (manifest, config, layers, index) instead
// of Docker's.
func WithOCI() PushOption {
	return func(c *pushConfig) { c.oci = true }
}

func newPushConfig(opts []PushOption) (pushConfig, error) {
	c := pushConfig{size: DefaultImageSize, layers: 1, labels: map[string]string{}}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return c, c.err
	}
	if c.layers < 1 || c.size < 1 {
		return c, fmt.Errorf("need at least one layer and one byte, got %d layers of %d bytes", c.layers, c.size)
	}
	return c, nil
}

// Push builds a random image (or, WithPlatforms, an index) and pushes it to
// repo:tag, returning the digest the registry serves for the tag.
func (r *Registry) Push(ctx context.Context, repo, tag string, opts ...PushOption) (string, error) {
	c, err := newPushConfig(opts)
	if err != nil {
		return "", fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	ref, err := name.NewTag(r.host + "/" + repo + ":" + tag)
	if err != nil {
		return "", fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	d, err := r.write(ctx, ref, c)
	if err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	return d.String(), nil
}

// PushImage pushes img, built by the caller (a program image of
// test/images, say), to repo:tag and returns its digest.
func (r *Registry) PushImage(ctx context.Context, repo, tag string, img v1.Image) (string, error) {
	ref, err := name.NewTag(r.host + "/" + repo + ":" + tag)
	if err != nil {
		return "", fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	if err := remote.Write(ref, img, r.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	return d.String(), nil
}

func (r *Registry) write(ctx context.Context, ref name.Tag, c pushConfig) (v1.Hash, error) {
	if len(c.platforms) > 0 {
		idx, err := buildIndex(c)
		if err != nil {
			return v1.Hash{}, err
		}
		if err := remote.WriteIndex(ref, idx, r.remoteOptions(ctx)...); err != nil {
			return v1.Hash{}, err
		}
		return idx.Digest()
	}
	img, err := buildImage(c, defaultPlatform)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(ref, img, r.remoteOptions(ctx)...); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// remoteOptions are the go-containerregistry options for talking to r.
func (r *Registry) remoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithTransport(r.transport)}
}
