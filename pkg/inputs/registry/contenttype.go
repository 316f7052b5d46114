package registry

import (
	"mime"
	"slices"
	"strings"
)

// Media types the senders of each format use. The charset and other
// parameters are not part of the check.
const (
	mediaJSON        = "application/json"
	mediaCloudEvents = "application/cloudevents+json"
	mediaForm        = "application/x-www-form-urlencoded"
)

var contentTypes = map[Format][]string{
	DockerHub: {mediaJSON},
	// registry:2 sends events.v1+json, registry:3 events.v2+json.
	Distribution: {"application/vnd.docker.distribution.events.v1+json",
		"application/vnd.docker.distribution.events.v2+json", mediaJSON},
	Harbor:   {mediaJSON, mediaCloudEvents},
	Quay:     {mediaJSON},
	GHCR:     {mediaJSON, mediaForm},
	ACR:      {mediaJSON},
	GAR:      {mediaJSON},
	ECR:      {mediaJSON},
	JFrog:    {mediaJSON},
	Gitea:    {mediaJSON, mediaForm},
	CDEvents: {mediaJSON, mediaCloudEvents},
	Generic:  {mediaJSON},
}

// ContentTypes lists the media types a delivery of f may have.
func ContentTypes(f Format) []string { return slices.Clone(contentTypes[f]) }

// AcceptsContentType reports whether a Content-Type header value is one of
// f's media types.
func AcceptsContentType(f Format, header string) bool {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return false
	}
	return slices.Contains(contentTypes[f], strings.ToLower(mt))
}
