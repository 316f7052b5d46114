package registry

import (
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// genericPayload is inplace's own format, for CI jobs and registries without
// a webhook of their own (FORMATS.md):
//
//	{"image": "registry.example.com/team/app:1.4.2",
//	 "digest": "sha256:…", "pushedAt": "2026-05-01T12:00:00Z"}
//
// or "images": [...] for several references. A reference needs a tag or a
// digest; "action", when present, must be "push".
type genericPayload struct {
	Action   *string  `json:"action"`
	Image    string   `json:"image"`
	Images   []string `json:"images"`
	Digest   string   `json:"digest"`
	PushedAt string   `json:"pushedAt"`
}

func generic(d Delivery) (found, error) {
	var p genericPayload
	if err := decode("", d.Body, &p); err != nil {
		return found{}, err
	}
	if p.Action != nil && lower(*p.Action) != "push" {
		return ignored("action " + *p.Action)
	}
	type named struct{ field, ref, digest string }
	var refs []named
	if p.Image != "" {
		refs = append(refs, named{"image", p.Image, p.Digest})
	}
	for i, s := range p.Images {
		refs = append(refs, named{fmt.Sprintf("images[%d]", i), s, ""})
	}
	if len(refs) == 0 {
		return found{}, fieldErr("image", "required (or images)")
	}
	var g found
	for _, n := range refs {
		push, err := genericPush(n.field, n.ref, n.digest, rfc3339(p.PushedAt))
		if err != nil {
			return found{}, err
		}
		g.pushes = append(g.pushes, push)
	}
	return g, nil
}

// genericPush reads one reference; digest, when the reference has none, is
// the payload's "digest".
func genericPush(field, ref, digest string, at time.Time) (rawPush, error) {
	r, err := imageref.Parse(ref)
	if err != nil {
		return rawPush{}, fieldErr(field, "not an image reference: "+err.Error())
	}
	if digest != "" && !events.ValidDigest(digest) {
		return rawPush{}, fieldErr("digest", fmt.Sprintf("%q is not a sha256:<64 hex> digest", digest))
	}
	digestField := field
	if r.Digest == "" && digest != "" {
		r.Digest, digestField = digest, "digest"
	}
	if r.Tag == "" && r.Digest == "" {
		return rawPush{}, fieldErr(field, "needs a tag or a digest")
	}
	return rawPush{
		host: r.Registry, repo: r.Repository, tag: r.Tag, digest: r.Digest, at: at,
		hostField: field, repoField: field, tagField: field, digestField: digestField,
	}, nil
}
