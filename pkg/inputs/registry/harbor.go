package registry

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// harborData is Harbor's event_data (Default format) and, unchanged, the
// data of its CloudEvents format.
type harborData struct {
	Resources []struct {
		Digest      string `json:"digest"`
		Tag         string `json:"tag"`
		ResourceURL string `json:"resource_url"`
	} `json:"resources"`
	Repository struct {
		RepoFullName string `json:"repo_full_name"`
	} `json:"repository"`
}

// harborPayload covers both formats: Default (type, occur_at, event_data)
// and CloudEvents structured mode (specversion, type, time, data).
type harborPayload struct {
	SpecVersion string          `json:"specversion"`
	Type        string          `json:"type"`
	OccurAt     json.Number     `json:"occur_at"`
	Time        string          `json:"time"`
	EventData   *harborData     `json:"event_data"`
	Data        json.RawMessage `json:"data"`
}

func harbor(d Delivery) (found, error) {
	var p harborPayload
	if err := decode("", d.Body, &p); err != nil {
		return found{}, err
	}
	if ceType := d.Header.Get("Ce-Type"); ceType != "" && p.SpecVersion == "" {
		// CloudEvents binary mode: the body is the data.
		return harborCloudEvent(ceType, d.Header.Get("Ce-Time"), d.Body, "body")
	}
	if p.SpecVersion != "" {
		return harborCloudEvent(p.Type, p.Time, p.Data, "data")
	}
	switch p.Type {
	case "PUSH_ARTIFACT", "pushImage":
	case "":
		return found{}, fieldErr("type", "required")
	default:
		return ignored("type " + p.Type)
	}
	if p.EventData == nil {
		return found{}, fieldErr("event_data", "required")
	}
	return harborPushes("event_data", *p.EventData, unixTime(p.OccurAt))
}

func harborCloudEvent(typ, at string, data []byte, field string) (found, error) {
	if typ != "harbor.artifact.pushed" {
		if typ == "" {
			return found{}, fieldErr("type", "required")
		}
		return ignored("type " + typ)
	}
	var hd harborData
	if err := decode(field, data, &hd); err != nil {
		return found{}, err
	}
	return harborPushes(field, hd, rfc3339(at))
}

// harborPushes reads each resource: Harbor reports the artifact's first tag,
// or its digest when it has none.
func harborPushes(field string, hd harborData, at time.Time) (found, error) {
	if len(hd.Resources) == 0 {
		return found{}, fieldErr(field+".resources", "at least one resource is required")
	}
	var g found
	for i, r := range hd.Resources {
		f := fmt.Sprintf("%s.resources[%d]", field, i)
		host, urlRepo, _, _ := splitRef(r.ResourceURL)
		repo, repoField := hd.Repository.RepoFullName, field+".repository.repo_full_name"
		if repo == "" {
			repo, repoField = urlRepo, f+".resource_url"
		}
		tag := r.Tag
		if strings.HasPrefix(tag, "sha256:") {
			tag = ""
		}
		g.pushes = append(g.pushes, rawPush{
			host: host, repo: repo, tag: tag, digest: r.Digest, at: at,
			hostField: f + ".resource_url", repoField: repoField,
			tagField: f + ".tag", digestField: f + ".digest",
		})
	}
	return g, nil
}
