package registry

import "net/url"

// giteaPayload is a Gitea (or Forgejo) `package` webhook. It has neither the
// registry host (taken from html_url, which is under Gitea's ROOT_URL, the
// registry's host too) nor a digest; version is the tag, or the digest of
// an untagged manifest.
type giteaPayload struct {
	Action  string `json:"action"`
	Package *struct {
		Type    string `json:"type"`
		Name    string `json:"name"`
		Version string `json:"version"`
		HTMLURL string `json:"html_url"`
		Created string `json:"created_at"`
		Owner   *struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"package"`
}

// giteaEventHeaders name the event; Forgejo sends its own and Gitea's.
var giteaEventHeaders = []string{"X-Gitea-Event", "X-Forgejo-Event", "X-Gogs-Event"}

func gitea(d Delivery) (found, error) {
	for _, h := range giteaEventHeaders {
		if ev := lower(d.Header.Get(h)); ev != "" && ev != "package" {
			return ignored("event " + ev)
		}
	}
	body, err := formPayload(d.Header.Get("Content-Type"), d.Body)
	if err != nil {
		return found{}, err
	}
	var p giteaPayload
	if err := decode("", body, &p); err != nil {
		return found{}, err
	}
	pkg := p.Package
	switch {
	case pkg == nil:
		return found{}, fieldErr("package", "required")
	case lower(p.Action) != "created":
		return ignored("action " + p.Action)
	case lower(pkg.Type) != "container":
		return ignored("package type " + pkg.Type + " is not a container")
	case pkg.Owner == nil || pkg.Owner.Login == "":
		return found{}, fieldErr("package.owner.login", "required")
	case pkg.Name == "":
		return found{}, fieldErr("package.name", "required")
	case pkg.Version == "":
		return found{}, fieldErr("package.version", "required")
	}
	host := ""
	if u, err := url.Parse(pkg.HTMLURL); err == nil {
		host = u.Host
	}
	return found{pushes: []rawPush{{
		host: host, repo: pkg.Owner.Login + "/" + pkg.Name, tag: pkg.Version, at: rfc3339(pkg.Created),
		hostField: "package.html_url", repoField: "package.name", tagField: "package.version",
	}}}, nil
}
