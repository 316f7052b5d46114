package registry

// acrPayload is an Azure Container Registry webhook: one event, not an
// envelope. Actions: push, delete, chart_push, chart_delete, quarantine and
// ping (the portal's test).
type acrPayload struct {
	Timestamp string `json:"timestamp"`
	Action    string `json:"action"`
	Target    *struct {
		MediaType  string `json:"mediaType"`
		Digest     string `json:"digest"`
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
	} `json:"target"`
	Request struct {
		Host string `json:"host"`
	} `json:"request"`
}

func acr(d Delivery) (found, error) {
	var p acrPayload
	if err := decode("", d.Body, &p); err != nil {
		return found{}, err
	}
	switch a := lower(p.Action); {
	case a == "ping":
		return ignored("ping")
	case a == "":
		return found{}, fieldErr("action", "required")
	case a != "push":
		return ignored("action " + p.Action)
	case p.Target == nil:
		return found{}, fieldErr("target", "required")
	}
	t := p.Target
	if !manifestTypes[t.MediaType] {
		return ignored("not an image manifest (" + t.MediaType + ")")
	}
	return found{pushes: []rawPush{{
		host: p.Request.Host, repo: t.Repository, tag: t.Tag, digest: t.Digest, at: rfc3339(p.Timestamp),
		hostField: "request.host", repoField: "target.repository",
		tagField: "target.tag", digestField: "target.digest",
	}}}, nil
}
