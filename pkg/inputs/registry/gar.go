package registry

import (
	"encoding/base64"
	"strings"
)

// garEnvelope is a Pub/Sub push delivery of the `gcr` topic, to which
// Artifact Registry and Container Registry publish.
type garEnvelope struct {
	Message *struct {
		Data         string `json:"data"`
		PublishTime  string `json:"publishTime"`
		PublishTime2 string `json:"publish_time"` // snake_case, sent alongside
	} `json:"message"`
}

// garMessage is the decoded message data: digest and tag are full
// references ("us-east1-docker.pkg.dev/p/r/img:1.1"); tag is absent for an
// untagged image.
type garMessage struct {
	Action string `json:"action"`
	Digest string `json:"digest"`
	Tag    string `json:"tag"`
}

func gar(d Delivery) (found, error) {
	var env garEnvelope
	if err := decode("", d.Body, &env); err != nil {
		return found{}, err
	}
	if env.Message == nil {
		return found{}, fieldErr("message", "required")
	}
	raw, err := garData(env.Message.Data)
	if err != nil {
		return found{}, err
	}
	var m garMessage
	if err := decode("message.data", raw, &m); err != nil {
		return found{}, err
	}
	switch a := strings.ToUpper(strings.TrimSpace(m.Action)); {
	case a == "":
		return found{}, fieldErr("message.data.action", "required")
	case a != "INSERT":
		return ignored("action " + m.Action)
	case m.Tag == "":
		return ignored(untagged)
	}
	at := env.Message.PublishTime
	if at == "" {
		at = env.Message.PublishTime2
	}
	return garPush(m, at)
}

func garData(s string) ([]byte, error) {
	if s == "" {
		return nil, fieldErr("message.data", "required")
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if raw, err = base64.URLEncoding.DecodeString(s); err != nil {
			return nil, fieldErr("message.data", "not base64: "+err.Error())
		}
	}
	return raw, nil
}

// garPush takes name and tag from the tag reference and the digest from the
// digest reference when it names the same repository.
func garPush(m garMessage, publishTime string) (found, error) {
	host, repo, tag, _ := splitRef(m.Tag)
	if tag == "" {
		return found{}, fieldErr("message.data.tag", "must be a reference with a tag")
	}
	dHost, dRepo, _, digest := splitRef(m.Digest)
	if m.Digest != "" && (dHost != host || dRepo != repo) {
		digest = ""
	}
	return found{pushes: []rawPush{{
		host: host, repo: repo, tag: tag, digest: digest, at: rfc3339(publishTime),
		hostField: "message.data.tag", repoField: "message.data.tag",
		tagField: "message.data.tag", digestField: "message.data.digest",
	}}}, nil
}
