package registry

import (
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/inplace-dev/inplace/events"
)

// Format names a webhook payload format. It is also the Origin of the
// events.ImagePushedData a parser returns.
type Format string

// The formats Parse understands. FORMATS.md describes each.
const (
	DockerHub    Format = "dockerhub"
	Distribution Format = "distribution"
	Harbor       Format = "harbor"
	Quay         Format = "quay"
	GHCR         Format = "ghcr"
	ACR          Format = "acr"
	GAR          Format = "gar"
	ECR          Format = "ecr"
	JFrog        Format = "jfrog"
	Gitea        Format = "gitea"
	CDEvents     Format = "cdevents"
	Generic      Format = "generic"
)

// Delivery is one webhook request as the parser sees it.
type Delivery struct {
	Header http.Header
	Body   []byte
	// Registry, when set, is "host[/path]" of the registry the cluster
	// pulls from. It replaces the host the payload names (or supplies the
	// one it lacks), and its path, if any, is put before the repository.
	// For jfrog it may contain "{repo_key}"; its default there is
	// "<jpd_origin host>/{repo_key}".
	Registry string
}

// Result is what a delivery reported.
type Result struct {
	// Pushes are the tagged pushes, canonical and valid, without duplicates.
	Pushes []events.ImagePushedData
	// Ignored, set only when Pushes is empty, says why the delivery carries
	// no push ("action delete", "test notification", ...).
	Ignored string
}

// Parser reads one delivery. A malformed payload is an error, always a
// *events.FieldError naming the payload field.
type Parser func(Delivery) (Result, error)

// extractor is a format's own reading of a delivery: raw pushes, reasons
// for what it skipped, or an error.
type extractor func(Delivery) (found, error)

type format struct {
	extract extractor
	// digestOnly accepts pushes without a tag: for senders that name an
	// artifact on purpose (cdevents, generic), not for registries, where an
	// untagged manifest is a platform manifest of a multi-arch push.
	digestOnly bool
}

var formats = map[Format]format{
	DockerHub:    {extract: dockerHub},
	Distribution: {extract: distribution},
	Harbor:       {extract: harbor},
	Quay:         {extract: quay},
	GHCR:         {extract: ghcr},
	ACR:          {extract: acr},
	GAR:          {extract: gar},
	ECR:          {extract: ecr},
	JFrog:        {extract: jfrog},
	Gitea:        {extract: gitea},
	CDEvents:     {extract: cdevents, digestOnly: true},
	Generic:      {extract: generic, digestOnly: true},
}

// Formats lists every format, sorted.
func Formats() []Format {
	out := make([]Format, 0, len(formats))
	for f := range formats {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Valid reports whether f is a known format.
func (f Format) Valid() bool {
	_, ok := formats[f]
	return ok
}

// ParserOf returns the parser of f, or nil for an unknown format.
func ParserOf(f Format) Parser {
	if !f.Valid() {
		return nil
	}
	return func(d Delivery) (Result, error) { return Parse(f, d) }
}

// Parse reads d as format f.
func Parse(f Format, d Delivery) (Result, error) {
	fm, ok := formats[f]
	if !ok {
		return Result{}, fieldErr("format", "unknown format "+string(f))
	}
	if d.Header == nil {
		d.Header = http.Header{}
	}
	got, err := fm.extract(d)
	if err != nil {
		return Result{}, err
	}
	return got.finish(f, fm.digestOnly, d.Registry)
}

// finish canonicalises the raw pushes, drops untagged and repeated ones and
// summarises what was skipped.
func (g found) finish(f Format, digestOnly bool, override string) (Result, error) {
	var r Result
	seen := map[string]bool{}
	skipped := g.skipped
	for _, p := range g.pushes {
		d, err := p.canonical(f, override)
		if err != nil {
			return Result{}, err
		}
		if d.Tag == "" && !digestOnly {
			skipped = append(skipped, untagged)
			continue
		}
		if artifactTag.MatchString(d.Tag) {
			skipped = append(skipped, artifact)
			continue
		}
		if err := d.Validate(); err != nil {
			return Result{}, fieldErr(p.tagField, "needs a tag or a digest")
		}
		if id := events.PushID(d); !seen[id] {
			seen[id] = true
			r.Pushes = append(r.Pushes, d)
		}
	}
	if len(r.Pushes) == 0 {
		r.Ignored = summarise(skipped)
	}
	return r, nil
}

const untagged = "untagged manifest (a platform manifest of a multi-arch push, or a push by digest)"

// artifactTag matches the tags that hold what is attached to an image, not
// an image: the OCI referrers tag schema (sha256-<hex>, where a registry
// has no referrers API: signatures, SBOMs) and cosign's legacy
// .sig/.att/.sbom tags. A policy such as force would otherwise move pods
// onto an index of signatures.
var artifactTag = regexp.MustCompile(`^sha256-[a-f0-9]{64}(\.(sig|att|sbom))?$`)

const artifact = "a signature or referrers tag (sha256-<digest>), not an image"

// summarise joins the distinct reasons, in order of first appearance.
func summarise(reasons []string) string {
	var out []string
	for _, s := range reasons {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "no push in the delivery"
	}
	return strings.Join(out, "; ")
}

// found is what an extractor read.
type found struct {
	pushes  []rawPush
	skipped []string
}

func (g *found) skip(reason string) { g.skipped = append(g.skipped, reason) }

func ignored(reason string) (found, error) { return found{skipped: []string{reason}}, nil }

func fieldErr(field, reason string) error {
	return &events.FieldError{Field: field, Reason: reason}
}
