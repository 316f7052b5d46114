package registry

import (
	"encoding/json"
	"strings"

	"github.com/inplace-dev/inplace/events"
)

// cdevents reads a CDEvents artifact.published event: in CloudEvents binary
// mode (the body is the CDEvent) or structured mode (the CDEvent is the
// data). Other CDEvents, and artifacts that are not OCI images, are ignored.
func cdevents(d Delivery) (found, error) {
	var top struct {
		SpecVersion string          `json:"specversion"`
		Data        json.RawMessage `json:"data"`
		Context     *struct {
			Type string `json:"type"`
		} `json:"context"`
		Subject *struct {
			ID string `json:"id"`
		} `json:"subject"`
	}
	if err := decode("", d.Body, &top); err != nil {
		return found{}, err
	}
	if top.SpecVersion != "" {
		// Structured mode: read the CDEvent inside.
		body := []byte(top.Data)
		if err := decode("data", body, &top); err != nil {
			return found{}, err
		}
		d.Body = body
	}
	switch {
	case top.Context == nil:
		return found{}, fieldErr("context", "required")
	case !strings.HasPrefix(top.Context.Type, events.CDEventArtifactPublishedPrefix):
		return ignored("type " + top.Context.Type)
	case top.Subject != nil && top.Subject.ID != "" && !strings.HasPrefix(strings.ToLower(top.Subject.ID), "pkg:oci/"):
		return ignored("subject is not an OCI image purl")
	}
	p, err := events.ImagePushedFromCDEvent(d.Body)
	if err != nil {
		return found{}, err
	}
	return found{pushes: []rawPush{{
		host: p.Registry, repo: p.Repository, tag: p.Tag, digest: p.Digest, at: p.PushedAt,
		hostField: "subject.id", repoField: "subject.id", tagField: "subject.id", digestField: "subject.id",
	}}}, nil
}
