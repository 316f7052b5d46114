package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// errNoSuchImage: the registry answered that the tag (or the repository)
// does not exist. A rollout to it could only fail at the first pull.
var errNoSuchImage = errors.New("no such image")

// resolveDigest asks the registry (with the docker credentials) for the
// digest of image's tag. A tag or repository the registry does not have is
// errNoSuchImage, with the tags it does have; any other failure (network,
// credentials) is returned as it is.
func resolveDigest(ctx context.Context, image string) (string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", image, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	d, err := remote.Head(ref, opts...)
	if err == nil {
		return d.Digest.String(), nil
	}
	if !notFound(err) {
		return "", fmt.Errorf("resolve %s: %w", image, err)
	}
	registry, repo := ref.Context().RegistryStr(), ref.Context().RepositoryStr()
	what := "tag " + ref.Identifier()
	if _, ok := ref.(name.Digest); ok {
		what = "manifest " + ref.Identifier()
	}
	tags, lerr := remote.List(ref.Context(), opts...)
	switch {
	case lerr != nil && notFound(lerr):
		return "", fmt.Errorf("%s: %w: the registry %s has no repository %s", image, errNoSuchImage, registry, repo)
	case lerr != nil || len(tags) == 0:
		return "", fmt.Errorf("%s: %w: the registry %s has no %s of %s", image, errNoSuchImage, registry, what, repo)
	}
	return "", fmt.Errorf("%s: %w: the registry %s has no %s of %s; it has %s", image, errNoSuchImage, registry, what, repo, someTags(tags))
}

// notFound: the registry answered 404 (a HEAD carries no error body).
func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// someTags lists the newest-looking tags, at most ten.
func someTags(tags []string) string {
	tags = slices.Clone(tags)
	slices.Sort(tags)
	slices.Reverse(tags)
	if len(tags) > 10 {
		return strings.Join(tags[:10], ", ") + fmt.Sprintf(" and %d more", len(tags)-10)
	}
	return strings.Join(tags, ", ")
}
