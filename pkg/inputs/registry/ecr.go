package registry

import "strings"

// ecrEvent is an Amazon EventBridge event from ECR, delivered by an API
// destination (the rule's target) as the plain event JSON.
type ecrEvent struct {
	DetailType string `json:"detail-type"`
	Source     string `json:"source"`
	Account    string `json:"account"`
	Region     string `json:"region"`
	Time       string `json:"time"`
	Detail     *struct {
		Result         string `json:"result"`
		ActionType     string `json:"action-type"`
		RepositoryName string `json:"repository-name"`
		ImageDigest    string `json:"image-digest"`
		ImageTag       string `json:"image-tag"`
	} `json:"detail"`
}

func ecr(d Delivery) (found, error) {
	var e ecrEvent
	if err := decode("", d.Body, &e); err != nil {
		return found{}, err
	}
	switch {
	case e.DetailType == "":
		return found{}, fieldErr("detail-type", "required")
	case e.DetailType != "ECR Image Action":
		return ignored("detail-type " + e.DetailType)
	case e.Detail == nil:
		return found{}, fieldErr("detail", "required")
	case !strings.EqualFold(e.Detail.ActionType, "PUSH"):
		return ignored("action-type " + e.Detail.ActionType)
	case !strings.EqualFold(e.Detail.Result, "SUCCESS"):
		return ignored("result " + e.Detail.Result)
	}
	host, err := ecrHost(e)
	if err != nil && d.Registry == "" {
		return found{}, err
	}
	return found{pushes: []rawPush{{
		host: host, repo: e.Detail.RepositoryName, tag: e.Detail.ImageTag,
		digest: e.Detail.ImageDigest, at: rfc3339(e.Time),
		hostField: "account", repoField: "detail.repository-name",
		tagField: "detail.image-tag", digestField: "detail.image-digest",
	}}}, nil
}

// ecrHost is the private registry of the account in the region:
// <account>.dkr.ecr.<region>.amazonaws.com (.com.cn in the China regions).
func ecrHost(e ecrEvent) (string, error) {
	switch {
	case e.Account == "":
		return "", fieldErr("account", "required")
	case e.Region == "":
		return "", fieldErr("region", "required")
	}
	suffix := ".amazonaws.com"
	if strings.HasPrefix(e.Region, "cn-") {
		suffix = ".amazonaws.com.cn"
	}
	return e.Account + ".dkr.ecr." + e.Region + suffix, nil
}
