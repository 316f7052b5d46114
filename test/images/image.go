package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Labels every image of this package carries in its config.
const (
	// ProgramLabel names the program the image runs.
	ProgramLabel = "dev.inplace.test/program"
	// SourcesLabel is the hash of the program's sources (see Binary).
	SourcesLabel = "dev.inplace.test/sources"
)

// DefaultPadding is the padding of the app, sidecar, init and probe images
// built by App, Sidecar, Init and Probe: enough incompressible bytes that a
// pull of a new version costs something measurable.
const DefaultPadding = 4 << 20

// Platform is the platform of every image built here.
var Platform = v1.Platform{OS: "linux", Architecture: "amd64"}

// epoch is the modification time of every file in a layer, so a layer's
// digest depends only on its content.
var epoch = time.Unix(0, 0).UTC()

// Options say how to build an image of a program.
type Options struct {
	// Env is set in the image config (KEY=VALUE) after PATH; a pod's env
	// overrides it.
	Env []string
	// Labels are added to the image config's labels.
	Labels map[string]string
	// Padding adds a second layer holding one file of this many
	// incompressible bytes; 0 adds none.
	Padding int64
	// Layers splits the padding over this many layers (default 1).
	Layers int
	// Seed chooses the padding's bytes: the same seed gives the same
	// bytes (and layer digest), a different seed different ones.
	Seed string
	// OCI uses OCI media types; the default is Docker's.
	OCI bool
}

// programLayers memoises each program's gzipped tar per binary within
// this process: compressing a binary costs a few hundred ms.
var programLayers sync.Map // binary path → func() ([]byte, error)

// Image builds a one-layer image of program p (plus o.Padding), its
// entrypoint the program at /<p>, for Platform.
func Image(ctx context.Context, p Program, o Options) (v1.Image, error) {
	b, err := build(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", p, err)
	}
	img, err := assemble(p, b, o)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", p, err)
	}
	return img, nil
}

func assemble(p Program, b binary, o Options) (v1.Image, error) {
	if o.Padding < 0 || o.Layers < 0 {
		return nil, fmt.Errorf("padding %d bytes in %d layers: want neither negative", o.Padding, o.Layers)
	}
	base, mt := empty.Image, types.DockerLayer
	if o.OCI {
		base = mutate.ConfigMediaType(mutate.MediaType(base, types.OCIManifestSchema1), types.OCIConfigJSON)
		mt = types.OCILayer
	}
	f, _ := programLayers.LoadOrStore(b.path, sync.OnceValues(func() ([]byte, error) {
		return binaryLayer(b.path, string(p))
	}))
	gz, err := f.(func() ([]byte, error))()
	if err != nil {
		return nil, err
	}
	bin, err := compressedLayer(gz, mt)
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{bin}
	pad, err := paddingLayers(o, mt)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(base, append(layers, pad...)...)
	if err != nil {
		return nil, err
	}
	return withConfig(img, p, b, o)
}

// withConfig sets the platform, entrypoint, env and labels.
func withConfig(img v1.Image, p Program, b binary, o Options) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = Platform.OS, Platform.Architecture
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = []string{"/" + string(p)}
	cf.Config.WorkingDir = "/"
	cf.Config.Env = append([]string{"PATH=/"}, o.Env...)
	cf.Config.Labels = maps.Clone(o.Labels)
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	cf.Config.Labels[ProgramLabel] = string(p)
	cf.Config.Labels[SourcesLabel] = b.hash
	return mutate.ConfigFile(img, cf)
}

// binaryLayer is a gzipped tar holding the file at src as name, mode
// 0755.
func binaryLayer(src, name string) ([]byte, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	content, err := tarOf(name, 0o755, int64(len(data)), bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return gzipped(content, gzip.DefaultCompression)
}

// paddingLayers are o.Layers layers sharing o.Padding bytes drawn from a
// generator seeded by o.Seed. They are stored uncompressed inside gzip, so
// their pushed size is their content size.
func paddingLayers(o Options, mt types.MediaType) ([]v1.Layer, error) {
	if o.Padding == 0 {
		return nil, nil
	}
	n := max(o.Layers, 1)
	seed := sha256.Sum256([]byte(o.Seed))
	rng := rand.NewChaCha8(seed)
	per := max(o.Padding/int64(n), 1)
	layers := make([]v1.Layer, 0, n)
	for i := range n {
		content, err := tarOf(fmt.Sprintf("padding-%d", i), 0o644, per, io.LimitReader(rng, per))
		if err != nil {
			return nil, err
		}
		l, err := layerOf(content, mt, gzip.NoCompression)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	return layers, nil
}

// tarOf is a tar archive of one regular file.
func tarOf(name string, mode, size int64, r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: name, Size: size, Mode: mode, Typeflag: tar.TypeReg, ModTime: epoch, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := io.CopyN(tw, r, size); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// layerOf gzips content at level into a layer served from memory.
func layerOf(content []byte, mt types.MediaType, level int) (v1.Layer, error) {
	gz, err := gzipped(content, level)
	if err != nil {
		return nil, err
	}
	return compressedLayer(gz, mt)
}

func gzipped(content []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, level)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if _, err := zw.Write(content); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// compressedLayer is a layer of media type mt served from gz, already
// compressed, so digesting and pushing it compress nothing.
func compressedLayer(gz []byte, mt types.MediaType) (v1.Layer, error) {
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil }
	l, err := tarball.LayerFromOpener(open, tarball.WithMediaType(mt))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return l, nil
}
