package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// errNotFound marks a reference the registry does not hold.
var errNotFound = errors.New("not found")

// reference is a parsed image reference: host/repo[:tag][@digest].
type reference struct {
	Host, Repo, Tag, Digest string
}

// parseReference splits an image reference the way containerd does for
// the references the test world uses; a reference without a registry host
// names Docker Hub, which a node of the test world cannot reach.
func parseReference(s string) (reference, error) {
	var r reference
	rest := s
	if i := strings.Index(rest, "@"); i >= 0 {
		rest, r.Digest = rest[:i], rest[i+1:]
		if !strings.HasPrefix(r.Digest, "sha256:") || len(r.Digest) != len("sha256:")+64 {
			return r, fmt.Errorf("invalid reference %q: bad digest %q", s, r.Digest)
		}
	}
	slash := strings.Index(rest, "/")
	if slash < 0 || !strings.ContainsAny(rest[:slash], ".:") && rest[:slash] != "localhost" {
		r.Host = "docker.io"
	} else {
		r.Host, rest = rest[:slash], rest[slash+1:]
	}
	if i := strings.LastIndex(rest, ":"); i >= 0 {
		rest, r.Tag = rest[:i], rest[i+1:]
	}
	if rest == "" {
		return r, fmt.Errorf("invalid reference %q: no repository", s)
	}
	r.Repo = rest
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	return r, nil
}

// Name is host/repo.
func (r reference) Name() string { return r.Host + "/" + r.Repo }

// resolved is what a pull of a reference yields.
type resolved struct {
	Digest string // the manifest (or index) digest the reference points at
	Size   int64  // config plus compressed layers of the linux/amd64 image
	Labels map[string]string
}

// registryClient reads manifests and configs from an OCI registry over
// plain HTTP (the test world's registry listens on loopback).
type registryClient struct {
	http  *http.Client
	hosts map[string]bool // the registries this node can reach
}

const manifestAccept = "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, " +
	"application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"

type manifest struct {
	MediaType string `json:"mediaType"`
	Config    struct {
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	} `json:"config"`
	Layers []struct {
		Size int64 `json:"size"`
	} `json:"layers"`
	Manifests []struct {
		Digest   string `json:"digest"`
		Platform struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	} `json:"manifests"`
}

// resolve does what a pull does to learn what ref is: the manifest, the
// linux/amd64 image of an index, and its config.
func (c *registryClient) resolve(ctx context.Context, ref reference) (resolved, error) {
	if !c.hosts[ref.Host] {
		return resolved{}, fmt.Errorf("dial tcp: lookup %s: no such host", ref.Host)
	}
	target := ref.Digest
	if target == "" {
		target = ref.Tag
	}
	m, digest, err := c.manifest(ctx, ref, target)
	if err != nil {
		return resolved{}, err
	}
	out := resolved{Digest: digest}
	if len(m.Manifests) > 0 {
		pick := m.Manifests[0].Digest
		for _, d := range m.Manifests {
			if d.Platform.OS == "linux" && d.Platform.Architecture == "amd64" {
				pick = d.Digest
				break
			}
		}
		if m, _, err = c.manifest(ctx, ref, pick); err != nil {
			return resolved{}, err
		}
	}
	out.Size = m.Config.Size
	for _, l := range m.Layers {
		out.Size += l.Size
	}
	var cfg struct {
		Config struct {
			Labels map[string]string `json:"Labels"`
		} `json:"config"`
	}
	if err := c.get(ctx, ref, "blobs/"+m.Config.Digest, "", &cfg, nil); err != nil {
		return resolved{}, err
	}
	out.Labels = cfg.Config.Labels
	return out, nil
}

func (c *registryClient) manifest(ctx context.Context, ref reference, target string) (manifest, string, error) {
	var m manifest
	var digest string
	err := c.get(ctx, ref, "manifests/"+target, manifestAccept, &m, &digest)
	return m, digest, err
}

// get fetches /v2/<repo>/<path> into v; digest, when set, receives the
// content digest of the body.
func (c *registryClient) get(ctx context.Context, ref reference, path, accept string, v any, digest *string) error {
	url := "http://" + ref.Host + "/v2/" + ref.Repo + "/" + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s:%s: %w", ref.Name(), strings.TrimPrefix(path, "manifests/"), errNotFound)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("unexpected status from GET request to %s: %s", url, resp.Status)
	}
	if digest != nil {
		sum := sha256.Sum256(body)
		*digest = "sha256:" + hex.EncodeToString(sum[:])
	}
	return json.Unmarshal(body, v)
}
