package restart

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// Flip returns the other reference to the bytes a container runs: spec is
// its spec image, running the digest of its status imageID, previous the
// reference a former restart switched away from (the state's
// previousImage), or "". The result names the same repository and pins
// running, so the kubelet restarts the container on the very same image.
//
//   - "repo:tag" (no digest) → "repo:tag@running"
//   - "repo:tag@d" → "repo@d"
//   - "repo@d" → previous, when it pins d too; else the other spelling of
//     the name ("nginx@d" ↔ "docker.io/library/nginx@d")
func Flip(spec, running, previous string) (string, error) {
	if running == "" {
		return "", fmt.Errorf("container runs no known digest (its status has no imageID): it cannot be restarted on the same bytes")
	}
	ref, err := imageref.Parse(spec)
	if err != nil {
		return "", err
	}
	if ref.Digest != "" && ref.Digest != running {
		return "", fmt.Errorf("the spec pins %s but the container runs %s: it is being changed", ref.Digest, running)
	}
	name, _, _ := strings.Cut(spec, "@")
	var out string
	switch {
	case ref.Digest == "":
		out = spec + "@" + running
	case ref.Tag != "":
		out = stripTag(name) + "@" + running
	case previous != "" && previous != spec && imageref.DigestOf(previous) == running:
		out = previous
	default:
		if out, err = otherSpelling(name, running); err != nil {
			return "", err
		}
	}
	if err := Same(spec, out, running); err != nil {
		return "", err
	}
	return out, nil
}

// Same checks that to is another reference to the bytes from runs: the same
// repository, pinned to running, and not the same string.
func Same(from, to, running string) error {
	switch {
	case from == to:
		return fmt.Errorf("%s is the image the container has: the kubelet would not restart it", to)
	case !imageref.SameRepository(from, to):
		return fmt.Errorf("%s is not of the repository of %s", to, from)
	case imageref.DigestOf(to) != running:
		return fmt.Errorf("%s does not pin the running digest %s", to, running)
	}
	return nil
}

// stripTag drops ":tag" from a name without digest.
func stripTag(name string) string {
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		return name[:i]
	}
	return name
}

// otherSpelling is the short name of a fully qualified one and the other
// way round; a registry other than Docker Hub has only one spelling.
func otherSpelling(name, digest string) (string, error) {
	named, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return "", err
	}
	short, full := reference.FamiliarName(named), named.Name()
	switch name {
	case short:
		if full != short {
			return full + "@" + digest, nil
		}
	case full:
		if full != short {
			return short + "@" + digest, nil
		}
	}
	return "", fmt.Errorf("%s@%s has no second reference to the same bytes (give it a tag, or restart it once from a tagged reference)", name, digest)
}
