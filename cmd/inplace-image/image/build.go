package image

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Options say what to build and where to push it.
type Options struct {
	// Registry is the prefix of the images' names: registry.example/you
	// gets registry.example/you/inplace and registry.example/you/nats-server.
	Registry string
	// Programs are the images to build (Inplace, NATSServer).
	Programs []Program
	// Platforms are built for each program; default linux/amd64 and linux/arm64.
	Platforms []v1.Platform
	// Dir is the main module's root, where `go build` runs.
	Dir string
	// Go is the go command; default "go".
	Go string
	// CABundle is the CA bundle copied into the base; default the build
	// machine's (FindCABundle).
	CABundle string
	// Revision and Created are the commit the images are built from and
	// its time: the OCI labels, and every time in layers and configs.
	Revision string
	Created  time.Time
	// Remote are go-containerregistry's options for the pushes; default
	// the Docker credentials of the machine (authn.DefaultKeychain).
	Remote []remote.Option
	// Log reports progress; nil discards it.
	Log *slog.Logger
}

// DefaultPlatforms are the platforms built unless told otherwise.
var DefaultPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Result is one image pushed.
type Result struct {
	Program Program
	// Digest names the pushed index by digest; Tag by its tag.
	Digest name.Digest
	Tag    name.Tag
	// Platforms are the images the index holds, with each image's
	// compressed size (config, layers).
	Platforms []v1.Platform
	Sizes     []int64
}

// Build compiles every program for every platform, assembles the images on
// a base made here and pushes one index per program, tagged.
func Build(ctx context.Context, o Options) ([]Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ca, err := readCA(o.CABundle)
	if err != nil {
		return nil, err
	}
	base, err := newBase(ca, o.Created)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "inplace-image-")
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	defer os.RemoveAll(tmp)
	var out []Result
	for _, prog := range o.Programs {
		r, err := buildProgram(ctx, o, base, prog, tmp)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// buildProgram builds, assembles and pushes one program's index.
func buildProgram(ctx context.Context, o Options, base *base, prog Program, tmp string) (Result, error) {
	tag, err := name.NewTag(o.Registry + "/" + prog.Name + ":" + prog.Tag)
	if err != nil {
		return Result{}, fmt.Errorf("image %s: %w", prog.Name, err)
	}
	r := Result{Program: prog, Tag: tag}
	var imgs []v1.Image
	for _, p := range o.Platforms {
		start := time.Now()
		bin, err := compile(ctx, o, prog, p, tmp)
		if err != nil {
			return Result{}, err
		}
		img, err := assemble(base, prog, p, bin, o)
		if err != nil {
			return Result{}, fmt.Errorf("image %s for %s: %w", prog.Name, p, err)
		}
		size, err := imageSize(img)
		if err != nil {
			return Result{}, fmt.Errorf("image %s for %s: %w", prog.Name, p, err)
		}
		o.Log.Info("built", "image", prog.Name, "platform", p.String(), "compressed", size, "took", time.Since(start).Round(time.Millisecond))
		imgs, r.Platforms, r.Sizes = append(imgs, img), append(r.Platforms, p), append(r.Sizes, size)
	}
	idx, err := index(imgs, r.Platforms)
	if err != nil {
		return Result{}, fmt.Errorf("image %s: %w", prog.Name, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return Result{}, fmt.Errorf("image %s: %w", prog.Name, err)
	}
	if err := remote.WriteIndex(tag, idx, append([]remote.Option{remote.WithContext(ctx)}, o.Remote...)...); err != nil {
		return Result{}, fmt.Errorf("push %s: %w", tag, err)
	}
	r.Digest = tag.Context().Digest(d.String())
	o.Log.Info("pushed", "image", r.Digest.String(), "tag", tag.String())
	return r, nil
}

func (o Options) withDefaults() (Options, error) {
	if strings.TrimSpace(o.Registry) == "" {
		return o, errors.New("REGISTRY: name the registry (and path) to push to, e.g. REGISTRY=127.0.0.1:5000/inplace")
	}
	o.Registry = strings.TrimSuffix(o.Registry, "/")
	if _, err := name.NewRepository(o.Registry + "/inplace"); err != nil {
		return o, fmt.Errorf("REGISTRY %q: %w", o.Registry, err)
	}
	if len(o.Programs) == 0 {
		return o, errors.New("build: no program to build")
	}
	for _, p := range o.Programs {
		if p.Tag == "" {
			return o, fmt.Errorf("image %s: no tag (VERSION)", p.Name)
		}
	}
	if len(o.Platforms) == 0 {
		o.Platforms = DefaultPlatforms
	}
	for _, p := range o.Platforms {
		if _, _, err := goArch(p); err != nil {
			return o, fmt.Errorf("PLATFORMS: %w", err)
		}
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.CABundle == "" {
		p, err := FindCABundle()
		if err != nil {
			return o, err
		}
		o.CABundle = p
	}
	if o.Remote == nil {
		o.Remote = []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// ParsePlatforms reads "linux/amd64,linux/arm64".
func ParsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := v1.ParsePlatform(f)
		if err != nil {
			return nil, fmt.Errorf("PLATFORMS %q: %w", f, err)
		}
		if _, _, err := goArch(*p); err != nil {
			return nil, fmt.Errorf("PLATFORMS: %w", err)
		}
		out = append(out, *p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("PLATFORMS %q: name at least one, e.g. linux/amd64", s)
	}
	return out, nil
}

// Kustomize is the `images:` entries of a kustomization that point the
// manifests of config/ at the images pushed, by digest.
func Kustomize(rs []Result) string {
	var b strings.Builder
	b.WriteString("images:\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "  - name: %s\n    newName: %s\n    digest: %s\n", r.Program.Manifest, r.Digest.Context().Name(), r.Digest.DigestStr())
	}
	return b.String()
}
