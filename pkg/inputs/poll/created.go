package poll

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/inplace-dev/inplace/pkg/inputs/keychain"
)

// ErrNoImage marks a digest its registry does not have.
var ErrNoImage = errors.New("the registry has no such image")

// createdAnnotation is the OCI annotation of an index's creation time.
const createdAnnotation = "org.opencontainers.image.created"

// Dater reads when an image was made, as its registry says: the `created`
// of its image config (an index: its org.opencontainers.image.created
// annotation, or the config of its first image), with the credentials of
// the pull secrets that pods running it name (Keychain). compute-spec
// dates with it a push that carries no time before its never-backwards
// check.
type Dater struct {
	Secrets keychain.SecretGetter
	// Transport reaches the registries; default http.DefaultTransport.
	Transport http.RoundTripper
}

// Created returns the creation time of image ("<registry>/<repository>@<digest>"),
// zero when the registry says none; ErrNoImage when the registry does not
// have it; another error when it could not be asked.
func (d *Dater) Created(ctx context.Context, image string, pullSecrets []string) (time.Time, error) {
	ref, err := name.NewDigest(image)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %s: %w", image, err)
	}
	kc, err := keychain.FromSecrets(ctx, d.Secrets, pullSecrets)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %s: %w", image, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tr := d.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(tr),
		remote.WithUserAgent("inplace-compute-spec")}
	t, err := created(ref, opts, 1)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %s: %w", image, err)
	}
	return t, nil
}

// created reads the creation time of ref, following an index to its first
// image at most depth times.
func created(ref name.Digest, opts []remote.Option, depth int) (time.Time, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return time.Time{}, notFound(err)
	}
	if !desc.MediaType.IsIndex() {
		img, err := desc.Image()
		if err != nil {
			return time.Time{}, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return time.Time{}, notFound(err)
		}
		return cf.Created.UTC(), nil
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return time.Time{}, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return time.Time{}, err
	}
	if s := im.Annotations[createdAnnotation]; s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("annotation %s %q: %w", createdAnnotation, s, err)
		}
		return t.UTC(), nil
	}
	if len(im.Manifests) == 0 || depth == 0 {
		return time.Time{}, nil
	}
	return created(ref.Context().Digest(first(im.Manifests).String()), opts, depth-1)
}

// first is the digest of an index's first image (an attestation manifest,
// platform unknown/unknown, is not one).
func first(ms []v1.Descriptor) v1.Hash {
	for _, m := range ms {
		if m.Platform == nil || m.Platform.OS != "unknown" {
			return m.Digest
		}
	}
	return ms[0].Digest
}

// notFound turns the registry's "no such manifest" (404, MANIFEST_UNKNOWN)
// into ErrNoImage.
func notFound(err error) error {
	var te *transport.Error
	if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", ErrNoImage, err)
	}
	return err
}
