package registry

import "encoding/json"

// dockerHubPayload is a Docker Hub repository webhook. Docker Hub sends
// only pushes, without a digest; a multi-arch push is delivered several
// times with the same pushed_at, hence the same event id.
type dockerHubPayload struct {
	PushData *struct {
		PushedAt json.Number `json:"pushed_at"`
		Tag      string      `json:"tag"`
	} `json:"push_data"`
	Repository *struct {
		RepoName  string `json:"repo_name"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"repository"`
}

func dockerHub(d Delivery) (found, error) {
	var p dockerHubPayload
	if err := decode("", d.Body, &p); err != nil {
		return found{}, err
	}
	switch {
	case p.PushData == nil:
		return found{}, fieldErr("push_data", "required")
	case p.Repository == nil:
		return found{}, fieldErr("repository", "required")
	case p.PushData.Tag == "":
		return found{}, fieldErr("push_data.tag", "required")
	}
	repo := p.Repository.RepoName
	if repo == "" && p.Repository.Name != "" {
		repo = p.Repository.Namespace + "/" + p.Repository.Name
	}
	if repo == "" {
		return found{}, fieldErr("repository.repo_name", "required")
	}
	return found{pushes: []rawPush{{
		host: "docker.io", repo: repo, tag: p.PushData.Tag, at: unixTime(p.PushData.PushedAt),
		hostField: "repository", repoField: "repository.repo_name", tagField: "push_data.tag",
	}}}, nil
}
