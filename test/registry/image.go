package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"maps"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// CrashLabel is the image config label marking an image whose containers
// crash; WithCrash sets it to "true" and Resolve reports it as Image.Crash.
const CrashLabel = "dev.inplace.test/crash"

// defaultPlatform is the platform of a single-platform image and the one
// Resolve picks from an index.
var defaultPlatform = v1.Platform{OS: "linux", Architecture: "amd64"}

// buildImage makes an image of random layers holding about c.size bytes in
// total, with c's labels, created time and the given platform in its config.
func buildImage(c pushConfig, p v1.Platform) (v1.Image, error) {
	base, layerType := empty.Image, types.DockerLayer
	if c.oci {
		base = mutate.ConfigMediaType(mutate.MediaType(base, types.OCIManifestSchema1), types.OCIConfigJSON)
		layerType = types.OCILayer
	}
	per := max(c.size/int64(c.layers), 1)
	layers := make([]v1.Layer, 0, c.layers)
	for range c.layers {
		l, err := randomLayer(per, layerType)
		if err != nil {
			return nil, fmt.Errorf("build image: layer: %w", err)
		}
		layers = append(layers, l)
	}
	img, err := mutate.AppendLayers(base, layers...)
	if err != nil {
		return nil, fmt.Errorf("build image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("build image: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Labels = maps.Clone(c.labels)
	cf.Config.Env = append([]string(nil), c.env...)
	cf.Created = v1.Time{Time: c.created}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("build image: config: %w", err)
	}
	return img, nil
}

// buildIndex makes a multi-platform index with one image per platform in
// c.platforms, each made by build: an OCI index with c.oci, else a Docker manifest
// list (what a docker buildx push makes).
func buildIndex(ctx context.Context, build imageBuilder, c pushConfig) (v1.ImageIndex, error) {
	var base v1.ImageIndex = empty.Index
	if !c.oci {
		base = mutate.IndexMediaType(base, types.DockerManifestList)
	}
	adds := make([]mutate.IndexAddendum, 0, len(c.platforms))
	for _, p := range c.platforms {
		img, err := build(ctx, c, p)
		if err != nil {
			return nil, fmt.Errorf("build index: %w", err)
		}
		mt, err := img.MediaType()
		if err != nil {
			return nil, fmt.Errorf("build index: %w", err)
		}
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{MediaType: mt, Platform: &p},
		})
	}
	return mutate.AppendManifests(base, adds...), nil
}

// randomLayer is a layer holding one file of size random bytes, gzipped
// without compression: a valid layer whose compressed size is its content
// size, and cheap to digest and push even at many MiB (random.Layer gzips
// at BestSpeed, which costs real CPU for data that cannot shrink).
func randomLayer(size int64, mt types.MediaType) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: "random-" + rand.Text(), Size: size, Mode: 0o644, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("random layer: %w", err)
	}
	if _, err := io.CopyN(tw, rand.Reader, size); err != nil {
		return nil, fmt.Errorf("random layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("random layer: %w", err)
	}
	content := buf.Bytes()
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil }
	l, err := tarball.LayerFromOpener(open, tarball.WithCompressionLevel(gzip.NoCompression), tarball.WithMediaType(mt))
	if err != nil {
		return nil, fmt.Errorf("random layer: %w", err)
	}
	return l, nil
}
