package registry

import (
	"net/url"
	"strings"
)

// jfrogEvent is a JFrog Platform predefined webhook, domain "docker".
type jfrogEvent struct {
	Domain    string `json:"domain"`
	EventType string `json:"event_type"`
	Origin    string `json:"jpd_origin"`
	Data      *struct {
		RepoKey   string `json:"repo_key"`
		Path      string `json:"path"`
		Name      string `json:"name"`
		SHA256    string `json:"sha256"`
		ImageName string `json:"image_name"`
		Tag       string `json:"tag"`
	} `json:"data"`
}

func jfrog(d Delivery) (found, error) {
	var e jfrogEvent
	if err := decode("", d.Body, &e); err != nil {
		return found{}, err
	}
	switch {
	case e.Domain == "":
		return found{}, fieldErr("domain", "required")
	case lower(e.Domain) != "docker":
		return ignored("domain " + e.Domain)
	case lower(e.EventType) != "pushed":
		return ignored("event_type " + e.EventType)
	case e.Data == nil:
		return found{}, fieldErr("data", "required")
	case e.Data.Tag == "":
		return found{}, fieldErr("data.tag", "required")
	case e.Data.RepoKey == "":
		return found{}, fieldErr("data.repo_key", "required")
	}
	host, repo, hostField, err := jfrogName(e, d.Registry)
	if err != nil {
		return found{}, err
	}
	digest := ""
	if e.Data.SHA256 != "" {
		digest = "sha256:" + e.Data.SHA256
	}
	return found{pushes: []rawPush{{
		host: host, repo: repo, tag: e.Data.Tag, digest: digest, hostFinal: true,
		hostField: hostField, repoField: "data.path",
		tagField: "data.tag", digestField: "data.sha256",
	}}}, nil
}

// jfrogName is where the image is pulled from: "<prefix>/<image path>".
// The prefix is the route's registry, with {repo_key} replaced, or by
// default "<jpd_origin host>/<repo_key>" (the repository path method). The
// image path is data.path without "/<tag>/<manifest file>" (it keeps any
// folder above the image), else data.image_name.
func jfrogName(e jfrogEvent, override string) (host, repo, hostField string, err error) {
	prefix, hostField := override, "registry"
	if prefix == "" {
		u, perr := url.Parse(e.Origin)
		if perr != nil || u.Host == "" {
			return "", "", "", fieldErr("jpd_origin", "required, a URL (or set the route's registry)")
		}
		prefix, hostField = u.Host+"/{repo_key}", "jpd_origin"
	}
	prefix = strings.ReplaceAll(prefix, "{repo_key}", e.Data.RepoKey)
	image := e.Data.ImageName
	if parts := strings.Split(strings.Trim(e.Data.Path, "/"), "/"); len(parts) >= 3 {
		image = strings.Join(parts[:len(parts)-2], "/")
	}
	host, repo = withPrefix(prefix, image)
	return host, repo, hostField, nil
}
