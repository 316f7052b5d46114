package registry

import (
	"encoding/json"
	"slices"
)

// quayPayload is a Quay repository notification. Only "Push to Repository"
// (repo_push) carries updated_tags: a list since Quay's v2 API, a map of tag
// to image id in the 2013 format. Quay sends no digest and no time.
type quayPayload struct {
	Repository       string          `json:"repository"`
	DockerURL        string          `json:"docker_url"`
	UpdatedTags      json.RawMessage `json:"updated_tags"`
	PrunedImageCount *int            `json:"pruned_image_count"`
}

func quay(d Delivery) (found, error) {
	var p quayPayload
	if err := decode("", d.Body, &p); err != nil {
		return found{}, err
	}
	if len(p.UpdatedTags) == 0 || string(p.UpdatedTags) == "null" {
		return ignored("not a repo_push notification (no updated_tags)")
	}
	// Quay's "Test Notification" sends RepoPushEvent.get_sample_data: tags
	// latest and foo, and a pruned_image_count no real push carries.
	if p.PrunedImageCount != nil {
		return ignored("test notification")
	}
	tags, err := quayTags(p.UpdatedTags)
	if err != nil {
		return found{}, err
	}
	host, repo, _, _ := splitRef(p.DockerURL)
	repoField := "docker_url"
	if p.Repository != "" {
		repo, repoField = p.Repository, "repository"
	}
	var g found
	for _, t := range tags {
		g.pushes = append(g.pushes, rawPush{
			host: host, repo: repo, tag: t,
			hostField: "docker_url", repoField: repoField, tagField: "updated_tags",
		})
	}
	if len(tags) == 0 {
		g.skip("no updated tags")
	}
	return g, nil
}

func quayTags(raw json.RawMessage) ([]string, error) {
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fieldErr("updated_tags", "must be a list of tags (or a map of tag to image id)")
	}
	tags := make([]string, 0, len(m))
	for t := range m {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	return tags, nil
}
