package imageref

import (
	"fmt"
	"strings"
	"sync"

	"github.com/distribution/reference"
)

// Ref is a canonical image reference.
type Ref struct {
	// Registry is the host, with its port if any ("docker.io", "localhost:5000").
	Registry string
	// Repository is the path under the registry ("library/nginx").
	Repository string
	Tag        string
	Digest     string
}

// Parse canonicalises s: the default registry is docker.io, official images
// gain "library/", index.docker.io becomes docker.io, and the registry host
// and repository are lower-cased (registries treat them case-insensitively,
// the reference grammar does not accept upper case).
//
// Results are remembered (a few thousand references): compute-spec parses
// every pod's images on each of its pods' outcomes, the same few strings,
// and the grammar's regular expressions cost more than the rest of it.
func Parse(s string) (Ref, error) {
	if r, ok := parsed.get(s); ok {
		return r, nil
	}
	r, err := parse(s)
	if err == nil {
		parsed.put(s, r)
	}
	return r, err
}

func parse(s string) (Ref, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return Ref{}, fmt.Errorf("image reference is empty")
	}
	named, err := reference.ParseNormalizedNamed(lowerName(in))
	if err != nil {
		return Ref{}, fmt.Errorf("image reference %q: %w", s, err)
	}
	r := Ref{Registry: reference.Domain(named), Repository: reference.Path(named)}
	if t, ok := named.(reference.Tagged); ok {
		r.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		r.Digest = d.Digest().String()
	}
	return r, nil
}

// lowerName lower-cases the name part of a reference, leaving the tag
// (case-sensitive) and digest alone.
func lowerName(s string) string {
	name, digest, hasDigest := strings.Cut(s, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i:]
	}
	out := strings.ToLower(name) + tag
	if hasDigest {
		out += "@" + digest
	}
	return out
}

// Name is "<registry>/<repository>", the canonical repository.
func (r Ref) Name() string { return r.Registry + "/" + r.Repository }

// String is the full canonical reference.
func (r Ref) String() string {
	s := r.Name()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// WithTag returns r pointing at tag (and no digest).
func (r Ref) WithTag(tag string) Ref { r.Tag, r.Digest = tag, ""; return r }

// Pinned returns r with digest added; the tag stays for people to read.
func (r Ref) Pinned(digest string) Ref { r.Digest = digest; return r }

// SameRepository reports whether a and b name the same repository, whatever
// their tags or digests. Unparseable references are never the same.
func SameRepository(a, b string) bool {
	ra, err := Parse(a)
	if err != nil {
		return false
	}
	rb, err := Parse(b)
	if err != nil {
		return false
	}
	return ra.Name() == rb.Name()
}

// DigestOf returns the sha256 digest in an imageID or reference such as
// "docker.io/library/nginx@sha256:…" or "docker-pullable://nginx@sha256:…",
// or "" when there is none.
func DigestOf(s string) string {
	i := strings.LastIndex(s, "@sha256:")
	if i < 0 {
		if strings.HasPrefix(s, "sha256:") {
			return s
		}
		return ""
	}
	return s[i+1:]
}

// memo remembers up to max parsed references; full, it starts again.
type memo struct {
	mu  sync.Mutex
	m   map[string]Ref
	max int
}

var parsed = &memo{max: 4096}

func (c *memo) get(s string) (Ref, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[s]
	return r, ok
}

func (c *memo) put(s string, r Ref) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]Ref, 64)
	}
	c.m[s] = r
}
