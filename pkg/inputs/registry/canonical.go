package registry

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/distribution/reference"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// rawPush is a push as a payload states it, with the payload field each
// part came from, so that an error names it.
type rawPush struct {
	host, repo, tag, digest string
	at                      time.Time

	hostField, repoField, tagField, digestField string
	// hostFinal: the extractor already applied Delivery.Registry (jfrog).
	hostFinal bool
}

var (
	hostRE = regexp.MustCompile(`^` + reference.DomainRegexp.String() + `$`)
	tagRE  = regexp.MustCompile(`^` + reference.TagRegexp.String() + `$`)
)

// dockerHosts are the spellings of Docker Hub's registry.
var dockerHosts = map[string]bool{
	"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true, "registry.hub.docker.com": true,
}

// placeholder stands in for a registry host while imageref parses the
// repository: a host without a dot or port ("registry", "harbor") would
// otherwise be read as the first path component of a Docker Hub name.
const placeholder = "placeholder.invalid"

// canonical returns p as a canonical ImagePushedData. It may have neither
// tag nor digest: the caller decides.
func (p rawPush) canonical(f Format, override string) (events.ImagePushedData, error) {
	var d events.ImagePushedData
	host, repo := p.host, p.repo
	if override != "" && !p.hostFinal {
		host, repo = withPrefix(override, repo)
	}
	host, err := canonicalHost(host, p.hostField)
	if err != nil {
		return d, err
	}
	repo, err = canonicalRepo(host, repo, p.repoField)
	if err != nil {
		return d, err
	}
	tag, digest, err := p.version()
	if err != nil {
		return d, err
	}
	d = events.ImagePushedData{
		Registry: host, Repository: repo, Tag: tag, Digest: digest,
		PushedAt: sane(p.at), Origin: string(f),
	}
	return d, nil
}

// withPrefix splits "host[/path]" and puts its path before repo.
func withPrefix(prefix, repo string) (string, string) {
	host, path, _ := strings.Cut(strings.Trim(strings.TrimSpace(prefix), "/"), "/")
	if path != "" {
		repo = path + "/" + strings.Trim(repo, "/")
	}
	return host, repo
}

func canonicalHost(host, field string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(host))
	h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
	h = strings.TrimSuffix(h, "/")
	switch {
	case h == "":
		return "", fieldErr(field, "required (or set the route's registry)")
	case dockerHosts[h]:
		return "docker.io", nil
	case !hostRE.MatchString(h):
		return "", fieldErr(field, fmt.Sprintf("%q is not a registry host", host))
	}
	return h, nil
}

// canonicalRepo lower-cases repo and, on Docker Hub, adds "library/".
func canonicalRepo(host, repo, field string) (string, error) {
	r := strings.Trim(strings.TrimSpace(repo), "/")
	if r == "" {
		return "", fieldErr(field, "required")
	}
	parseHost := placeholder
	if host == "docker.io" {
		parseHost = host
	}
	ref, err := imageref.Parse(parseHost + "/" + r)
	if err != nil || ref.Tag != "" || ref.Digest != "" || ref.Registry != parseHost {
		return "", fieldErr(field, fmt.Sprintf("%q is not a valid repository", repo))
	}
	return ref.Repository, nil
}

// version checks the tag and digest. A tag that is a digest (Harbor and
// Gitea write the digest there for an untagged push) becomes the digest. A
// malformed digest (another algorithm, a wrong length, not hex) is an
// error naming its field: a push whose digest cannot be trusted is refused
// rather than taken as a push of its tag alone.
func (p rawPush) version() (tag, digest string, err error) {
	tag, digest = strings.TrimSpace(p.tag), strings.TrimSpace(p.digest)
	digestField := p.digestField
	if strings.HasPrefix(tag, "sha256:") {
		if digest == "" {
			digest, digestField = tag, p.tagField
		}
		tag = ""
	}
	if tag != "" && !tagRE.MatchString(tag) {
		return "", "", fieldErr(p.tagField, fmt.Sprintf("%q is not a valid tag", p.tag))
	}
	if digest != "" && !events.ValidDigest(digest) {
		return "", "", fieldErr(digestField, fmt.Sprintf("%q is not a sha256:<64 hex> digest", digest))
	}
	return tag, digest, nil
}

// sane keeps times an event can carry: a zero year-1 time ("0001-01-01",
// GitHub's placeholder) or one out of JSON's range becomes "unknown".
func sane(t time.Time) time.Time {
	u := t.UTC()
	if u.Year() < 1970 || u.Year() > 9999 {
		return time.Time{}
	}
	return u
}

// splitRef splits "host/path[:tag][@digest]", the way Harbor, Quay and
// Google write references, without defaulting anything: canonical checks
// the parts.
func splitRef(s string) (host, repo, tag, digest string) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://")
	s, digest, _ = strings.Cut(s, "@")
	host, repo, ok := strings.Cut(s, "/")
	if !ok {
		return "", host, "", digest
	}
	if i := strings.LastIndex(repo, ":"); i >= 0 {
		repo, tag = repo[:i], repo[i+1:]
	}
	return host, repo, tag, digest
}
