package registry

import (
	"fmt"
	"net/url"
)

// distributionEvent is one event of a CNCF Distribution notification
// envelope (media types events.v1+json in v2.x, events.v2+json in v3; the
// shape is the same). GitLab's bundled registry sends the same envelope.
type distributionEvent struct {
	Timestamp string              `json:"timestamp"`
	Action    string              `json:"action"`
	Target    *distributionTarget `json:"target"`
	Request   struct {
		Host string `json:"host"`
	} `json:"request"`
}

type distributionTarget struct {
	MediaType  string `json:"mediaType"`
	Digest     string `json:"digest"`
	Repository string `json:"repository"`
	URL        string `json:"url"`
	Tag        string `json:"tag"`
}

// manifestTypes are the media types of image manifests and indexes. An
// empty media type is accepted too: only manifests carry tags.
var manifestTypes = map[string]bool{
	"": true,
	"application/vnd.docker.distribution.manifest.v1+json":      true,
	"application/vnd.docker.distribution.manifest.v1+prettyjws": true,
	"application/vnd.docker.distribution.manifest.v2+json":      true,
	"application/vnd.docker.distribution.manifest.list.v2+json": true,
	"application/vnd.oci.image.manifest.v1+json":                true,
	"application/vnd.oci.image.index.v1+json":                   true,
}

func distribution(d Delivery) (found, error) {
	var env struct {
		Events *[]distributionEvent `json:"events"`
	}
	if err := decode("", d.Body, &env); err != nil {
		return found{}, err
	}
	if env.Events == nil {
		return found{}, fieldErr("events", "required")
	}
	var g found
	for i, e := range *env.Events {
		f := fmt.Sprintf("events[%d]", i)
		switch {
		case e.Action == "":
			return found{}, fieldErr(f+".action", "required")
		case lower(e.Action) != "push":
			g.skip("action " + e.Action)
		case e.Target == nil:
			return found{}, fieldErr(f+".target", "required in a push event")
		case !manifestTypes[e.Target.MediaType]:
			g.skip("blob or non-image push")
		case e.Target.Tag == "":
			g.skip(untagged)
		default:
			g.pushes = append(g.pushes, distributionPush(f, e))
		}
	}
	return g, nil
}

func distributionPush(f string, e distributionEvent) rawPush {
	host, hostField := e.Request.Host, f+".request.host"
	if host == "" {
		if u, err := url.Parse(e.Target.URL); err == nil {
			host, hostField = u.Host, f+".target.url"
		}
	}
	return rawPush{
		host: host, repo: e.Target.Repository, tag: e.Target.Tag, digest: e.Target.Digest,
		at:        rfc3339(e.Timestamp),
		hostField: hostField, repoField: f + ".target.repository",
		tagField: f + ".target.tag", digestField: f + ".target.digest",
	}
}
