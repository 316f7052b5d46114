package registry

import (
	"encoding/json"
	"strings"

	"github.com/inplace-dev/inplace/events"
)

// cdevents reads a CDEvents artifact.published event: in CloudEvents binary
// mode (the body is the CDEvent) or structured mode (the CDEvent is the
// data). Other CDEvents, and artifacts that are not OCI images, are ignored.
// cdEnvelope is what cdevents reads of a body: a CloudEvent in structured
// mode (specversion, data) or the CDEvent itself (context, subject).
type cdEnvelope struct {
	SpecVersion string          `json:"specversion"`
	Data        json.RawMessage `json:"data"`
	Context     *struct {
		Type string `json:"type"`
	} `json:"context"`
	Subject *struct {
		ID string `json:"id"`
	} `json:"subject"`
}

func cdevents(d Delivery) (found, error) {
	var top cdEnvelope
	if err := decode("", d.Body, &top); err != nil {
		return found{}, err
	}
	body := d.Body
	if top.SpecVersion != "" {
		// Structured mode: read the CDEvent inside.
		body, top = []byte(top.Data), cdEnvelope{}
		if err := decode("data", body, &top); err != nil {
			return found{}, err
		}
	}
	switch {
	case top.Context == nil:
		return found{}, fieldErr("context", "required")
	case !strings.HasPrefix(top.Context.Type, events.CDEventArtifactPublishedPrefix):
		return ignored("type " + top.Context.Type)
	case top.Subject != nil && top.Subject.ID != "" && !strings.HasPrefix(strings.ToLower(top.Subject.ID), "pkg:oci/"):
		return ignored("subject is not an OCI image purl")
	}
	p, err := events.ImagePushedFromCDEvent(body)
	if err != nil {
		return found{}, err
	}
	return found{pushes: []rawPush{{
		host: p.Registry, repo: p.Repository, tag: p.Tag, digest: p.Digest, at: p.PushedAt,
		hostField: "subject.id", repoField: "subject.id", tagField: "subject.id", digestField: "subject.id",
	}}}, nil
}
