package events

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/package-url/packageurl-go"
)

// cdContext is the context of a CDEvent; v0.4 names its version "version",
// v0.5+ "specversion".
type cdContext struct {
	Version     string    `json:"version,omitempty"`
	SpecVersion string    `json:"specversion,omitempty"`
	ID          string    `json:"id"`
	Source      string    `json:"source"`
	Type        string    `json:"type"`
	Timestamp   time.Time `json:"timestamp"`
}

type cdSubject struct {
	ID      string          `json:"id"`
	Source  string          `json:"source,omitempty"`
	Type    string          `json:"type,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
}

type cdEvent struct {
	Context cdContext `json:"context"`
	Subject cdSubject `json:"subject"`
}

// ImagePushedFromCDEvent reads a CDEvents artifact.published body (any spec
// version) whose subject id is an OCI purl, such as
// pkg:oci/app@sha256%3A…?repository_url=registry.example/team/app&tag=v1.
// The registry and repository are left as the purl gives them; callers
// canonicalise them.
func ImagePushedFromCDEvent(body []byte) (ImagePushedData, error) {
	var d ImagePushedData
	var ev cdEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return d, fieldErr("body", "invalid JSON: "+err.Error())
	}
	if !strings.HasPrefix(ev.Context.Type, CDEventArtifactPublishedPrefix) {
		return d, fieldErr("context.type", fmt.Sprintf("%q is not %s*", ev.Context.Type, CDEventArtifactPublishedPrefix))
	}
	if ev.Subject.ID == "" {
		return d, fieldErr("subject.id", "required")
	}
	p, err := packageurl.FromString(ev.Subject.ID)
	if err != nil {
		return d, fieldErr("subject.id", "not a purl: "+err.Error())
	}
	if p.Type != "oci" {
		return d, fieldErr("subject.id", fmt.Sprintf("purl type %q is not oci", p.Type))
	}
	q := p.Qualifiers.Map()
	repoURL, err := url.PathUnescape(q["repository_url"])
	if err != nil || repoURL == "" {
		return d, fieldErr("subject.id", "purl has no repository_url qualifier, so the image cannot be located")
	}
	repoURL = strings.TrimPrefix(strings.TrimPrefix(repoURL, "https://"), "http://")
	host, path, ok := strings.Cut(strings.TrimSuffix(repoURL, "/"), "/")
	if !ok || path == "" {
		// Only a host: the purl name is the repository.
		path = p.Name
	}
	d = ImagePushedData{
		Registry:   host,
		Repository: path,
		Tag:        q["tag"],
		Digest:     p.Version,
		PushedAt:   ev.Context.Timestamp,
		Origin:     "cdevents",
	}
	if err := validateDigest("subject.id (purl version)", d.Digest); err != nil {
		return d, err
	}
	if d.Tag == "" && d.Digest == "" {
		return d, fieldErr("subject.id", "purl has neither a digest version nor a tag qualifier")
	}
	return d, nil
}

// FromCDEvent adapts a CDEvents artifact.published CloudEvent into image.pushed.
func FromCDEvent(e cloudevents.Event) (cloudevents.Event, error) {
	d, err := ImagePushedFromCDEvent(e.Data())
	if err != nil {
		return e, permanent(e.Type(), err)
	}
	out, err := New(PushID(d), ImagePushed, Source("cdevents"), d.Ref(), d)
	if err != nil {
		return out, permanent(e.Type(), err)
	}
	return out, nil
}

// PushID is the id of the image.pushed event for a push: the same push
// delivered twice (by a registry retry, or by two webhooks) has the same id.
// Without a digest, the push time tells a re-push of a moving tag apart.
func PushID(d ImagePushedData) string {
	key := d.Tag + "@" + d.Digest
	if d.Digest == "" && !d.PushedAt.IsZero() {
		key += "/" + d.PushedAt.UTC().Format(time.RFC3339Nano)
	}
	return DeriveID("push/"+d.Name(), ImagePushed, key)
}
