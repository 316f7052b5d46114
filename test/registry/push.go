package registry

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/inplace-dev/inplace/test/images"
)

// DefaultImageSize is the total layer size of a pushed image unless
// WithSize or WithSizeMB says otherwise: a few KB keeps pushes fast.
const DefaultImageSize = 2 << 10

// PushOption changes what Push builds.
type PushOption func(*pushConfig)

type pushConfig struct {
	size      int64
	sizeSet   bool
	env       []string
	program   images.Program
	layers    int
	labels    map[string]string
	platforms []v1.Platform
	oci       bool
	created   time.Time
	err       error
}

// WithSize sets the total uncompressed layer size in bytes; random content
// barely compresses, so the pushed (compressed) size is about the same.
func WithSize(bytes int64) PushOption {
	return func(c *pushConfig) { c.size, c.sizeSet = bytes, true }
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

// WithEnv adds env entries (KEY=VALUE) to the image config: in runnable
// mode, settings of the program (test/images/settings), e.g.
// "APP_ERROR_RATE=0.1" or "APP_START_DELAY=2s".
func WithEnv(entries ...string) PushOption {
	return func(c *pushConfig) {
		for _, e := range entries {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				c.err = fmt.Errorf("env entry %q: want KEY=VALUE", e)
				return
			}
		}
		c.env = append(c.env, entries...)
	}
}

// WithProgram chooses the program a runnable push runs (by default the
// app, or the sidecar for a sidecar's repository; see Options.Runnable).
// It changes nothing on a registry that is not runnable.
func WithProgram(p images.Program) PushOption {
	return func(c *pushConfig) { c.program = p }
}

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

// WithCreated sets the image config's created time (default: the time of
// the push, as a build that pushes at once would write it).
func WithCreated(t time.Time) PushOption {
	return func(c *pushConfig) { c.created = t }
}

func newPushConfig(opts []PushOption) (pushConfig, error) {
	c := pushConfig{size: DefaultImageSize, layers: 1, labels: map[string]string{}, created: time.Now().UTC()}
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
//
// On a runnable registry (Options.Runnable) the image is a program image
// instead (see runnableImage); a push still makes a new digest every time.
func (r *Registry) Push(ctx context.Context, repo, tag string, opts ...PushOption) (string, error) {
	c, err := newPushConfig(opts)
	if err != nil {
		return "", fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	ref, err := name.NewTag(r.host + "/" + repo + ":" + tag)
	if err != nil {
		return "", fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	d, err := r.write(ctx, ref, r.builder(repo, tag), c)
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

// imageBuilder builds the image of one platform of a push.
type imageBuilder func(ctx context.Context, c pushConfig, p v1.Platform) (v1.Image, error)

// builder is how r builds the images of a push of repo:tag: random
// layers, or on a runnable registry the program image for linux/amd64.
func (r *Registry) builder(repo, tag string) imageBuilder {
	return func(ctx context.Context, c pushConfig, p v1.Platform) (v1.Image, error) {
		if r.runnable && p.OS == defaultPlatform.OS && p.Architecture == defaultPlatform.Architecture {
			return runnableImage(ctx, c, repo, tag)
		}
		return buildImage(c, p)
	}
}

func (r *Registry) write(ctx context.Context, ref name.Tag, build imageBuilder, c pushConfig) (v1.Hash, error) {
	if len(c.platforms) > 0 {
		idx, err := buildIndex(ctx, build, c)
		if err != nil {
			return v1.Hash{}, err
		}
		if err := remote.WriteIndex(ref, idx, r.remoteOptions(ctx)...); err != nil {
			return v1.Hash{}, err
		}
		return idx.Digest()
	}
	img, err := build(ctx, c, defaultPlatform)
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
