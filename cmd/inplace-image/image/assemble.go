package image

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Labels of every image (OCI's pre-defined annotation keys).
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelTitle    = "org.opencontainers.image.title"
	LabelCreated  = "org.opencontainers.image.created"
	LabelLicenses = "org.opencontainers.image.licenses"
)

// Source is the project's repository, the images' source label.
const Source = "https://github.com/inplace-dev/inplace"

// base is the layer every image starts from, and the time of its files.
type base struct {
	layer   v1.Layer
	created time.Time
}

// newBase makes the base layer: users, /tmp, home, the CA bundle ca.
func newBase(ca []byte, created time.Time) (*base, error) {
	t, err := tarOf(baseEntries(ca), created)
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	l, err := layerOf(t)
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	return &base{layer: l, created: created}, nil
}

// assemble is prog's image for p: the base, the binary at prog.Path as
// one layer, and a config that runs it as nonroot.
func assemble(b *base, prog Program, p v1.Platform, binary string, o Options) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("binary: %w", err)
	}
	t, err := tarOf([]entry{{name: strings.TrimPrefix(prog.Path, "/"), mode: 0o755, data: data}}, b.created)
	if err != nil {
		return nil, err
	}
	bin, err := layerOf(t)
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, b.layer, bin); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: b.created}
	cf.Config.Entrypoint = []string{prog.Path}
	cf.Config.User = fmt.Sprintf("%d:%d", Nonroot, Nonroot)
	cf.Config.WorkingDir = "/home/nonroot"
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = map[string]string{
		LabelTitle: prog.Name, LabelSource: Source, LabelRevision: o.Revision, LabelVersion: prog.Tag,
		LabelCreated: b.created.UTC().Format(time.RFC3339), LabelLicenses: "Apache-2.0",
	}
	cf.History = []v1.History{
		{Created: cf.Created, CreatedBy: "inplace-image: base (passwd, group, /tmp, CA bundle)"},
		{Created: cf.Created, CreatedBy: "inplace-image: go build " + prog.Package},
	}
	return mutate.ConfigFile(img, cf)
}

// layerOf is the gzipped OCI layer of an uncompressed tar. Go's gzip is
// deterministic: the same tar makes the same digest.
func layerOf(t []byte) (v1.Layer, error) {
	var gz bytes.Buffer
	w, err := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(t); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	b := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// index is the OCI index of imgs, one per platform.
func index(imgs []v1.Image, ps []v1.Platform) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, img := range imgs {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &ps[i]}})
	}
	return idx, nil
}

// imageSize is what pulling img moves: its config and compressed layers.
func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}
