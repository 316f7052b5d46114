package signature

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/sigstore/sigstore-go/pkg/bundle"
)

// BundleType is the artifact type (and layer media type) of a Sigstore
// bundle attached to an image as an OCI referrer.
const BundleType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Limits on what a registry may make the gate read.
const (
	maxBundles     = 16
	maxBundleBytes = 1 << 20
)

// found is one bundle attached to the digest, or why it could not be read.
// unread says the registry did not answer with the bundle (a network error,
// a 5xx, 408 or 429): the bundle may verify when read again, so it is no
// reason to refuse a push.
type found struct {
	ref    string
	bundle *bundle.Bundle
	err    error
	unread bool
}

// bundles lists the Sigstore bundles attached to d. A registry that cannot
// be reached is an error (retryable); a bundle that cannot be read is
// reported with its reason, and whether reading it again may succeed.
func bundles(d name.Digest, opts []remote.Option) ([]found, error) {
	idx, err := remote.Referrers(d, append(opts, remote.WithFilter("artifactType", BundleType))...)
	if err != nil {
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("referrers of %s: %w", d, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", d, err)
	}
	var out []found
	for _, desc := range im.Manifests {
		if desc.ArtifactType != BundleType {
			continue
		}
		if len(out) == maxBundles {
			break
		}
		ref := d.Context().Digest(desc.Digest.String())
		b, err := readBundle(ref, opts)
		out = append(out, found{ref: ref.String(), bundle: b, err: err, unread: err != nil && transient(err)})
	}
	return out, nil
}

// transient says whether err, from reading a bundle, is the registry or
// the network failing rather than the bundle: anything but an answer with a
// 4xx status (other than 408 and 429) and a bundle that was read and found
// wrong (errBadBundle).
func transient(err error) bool {
	if errors.Is(err, errBadBundle) {
		return false
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		c := terr.StatusCode
		return c >= 500 || c == http.StatusRequestTimeout || c == http.StatusTooManyRequests
	}
	return true
}

// errBadBundle marks a bundle that was read and is not one the gate accepts.
var errBadBundle = errors.New("bad bundle")

// readBundle reads the bundle layer of one referrer manifest.
func readBundle(ref name.Digest, opts []remote.Option) (*bundle.Bundle, error) {
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil || string(mt) != BundleType {
			continue
		}
		return decodeLayer(l)
	}
	return nil, fmt.Errorf("%w: no layer of media type %s", errBadBundle, BundleType)
}

func decodeLayer(l v1.Layer) (*bundle.Bundle, error) {
	if size, err := l.Size(); err == nil && size > maxBundleBytes {
		return nil, fmt.Errorf("%w: bundle of %d bytes (at most %d)", errBadBundle, size, maxBundleBytes)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	raw, err := io.ReadAll(io.LimitReader(rc, maxBundleBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxBundleBytes {
		return nil, fmt.Errorf("%w: bundle larger than %d bytes", errBadBundle, maxBundleBytes)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("%w: not a Sigstore bundle: %w", errBadBundle, err)
	}
	return &b, nil
}
