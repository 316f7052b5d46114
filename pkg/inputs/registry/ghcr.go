package registry

import (
	"strings"
)

type ghLogin struct {
	Login string `json:"login"`
}

type ghcrPackage struct {
	Name           string   `json:"name"`
	Namespace      string   `json:"namespace"`
	PackageType    string   `json:"package_type"`
	Ecosystem      string   `json:"ecosystem"`
	Owner          *ghLogin `json:"owner"`
	PackageVersion *struct {
		UpdatedAt         string `json:"updated_at"`
		CreatedAt         string `json:"created_at"`
		ContainerMetadata *struct {
			Tag struct {
				Name   string `json:"name"`
				Digest string `json:"digest"`
			} `json:"tag"`
			Manifest struct {
				Digest string `json:"digest"`
			} `json:"manifest"`
		} `json:"container_metadata"`
	} `json:"package_version"`
}

// ghcrPayload is a GitHub `package` or `registry_package` webhook (the same
// content under either key). A multi-arch push sends one per manifest; only
// the index's carries the tag.
type ghcrPayload struct {
	Action          string       `json:"action"`
	Package         *ghcrPackage `json:"package"`
	RegistryPackage *ghcrPackage `json:"registry_package"`
	Organization    *ghLogin     `json:"organization"`
}

// ghcrActions are the actions of a package event that put a version (and
// its tag) in place. "create" appears in captured deliveries of 2020.
var ghcrActions = map[string]bool{"published": true, "updated": true, "create": true}

func ghcr(d Delivery) (found, error) {
	ev := lower(d.Header.Get("X-GitHub-Event"))
	if ev != "" && ev != "package" && ev != "registry_package" {
		return ignored("event " + ev)
	}
	body, err := formPayload(d.Header.Get("Content-Type"), d.Body)
	if err != nil {
		return found{}, err
	}
	var p ghcrPayload
	if err := decode("", body, &p); err != nil {
		return found{}, err
	}
	pkg, field := p.Package, "package"
	if pkg == nil {
		pkg, field = p.RegistryPackage, "registry_package"
	}
	switch {
	case pkg == nil:
		return found{}, fieldErr("package", "required")
	case !ghcrActions[lower(p.Action)]:
		return ignored("action " + p.Action)
	case !ghcrContainer(pkg):
		return ignored("package type " + pkg.PackageType + " is not a container")
	case pkg.PackageVersion == nil:
		return found{}, fieldErr(field+".package_version", "required")
	case pkg.PackageVersion.ContainerMetadata == nil:
		return ignored("no container_metadata (a legacy docker.pkg.github.com package)")
	}
	return ghcrPush(field, pkg, p.Organization)
}

// ghcrContainer: package_type is CONTAINER on ghcr.io ("docker" on the
// retired docker.pkg.github.com); older payloads say it in ecosystem, and
// GitHub's own examples disagree between the two, so either will do.
func ghcrContainer(pkg *ghcrPackage) bool {
	for _, t := range []string{pkg.PackageType, pkg.Ecosystem} {
		if t := lower(t); t == "container" || t == "docker" {
			return true
		}
	}
	return false
}

func ghcrPush(field string, pkg *ghcrPackage, org *ghLogin) (found, error) {
	owner, ownerField := "", field+".owner.login"
	switch {
	case pkg.Owner != nil && pkg.Owner.Login != "":
		owner = pkg.Owner.Login
	case org != nil && org.Login != "":
		owner, ownerField = org.Login, "organization.login"
	case pkg.Namespace != "" && !strings.Contains(pkg.Namespace, "/"):
		owner, ownerField = pkg.Namespace, field+".namespace"
	default:
		return found{}, fieldErr(field+".owner.login", "required")
	}
	if pkg.Name == "" {
		return found{}, fieldErr(field+".name", "required")
	}
	v := pkg.PackageVersion
	cm := v.ContainerMetadata
	digest, digestField := cm.Tag.Digest, field+".package_version.container_metadata.tag.digest"
	if digest == "" {
		digest, digestField = cm.Manifest.Digest, field+".package_version.container_metadata.manifest.digest"
	}
	at := rfc3339(v.UpdatedAt)
	if sane(at).IsZero() {
		at = rfc3339(v.CreatedAt)
	}
	return found{pushes: []rawPush{{
		host: "ghcr.io", repo: owner + "/" + pkg.Name, tag: cm.Tag.Name, digest: digest, at: at,
		hostField: field, repoField: ownerField,
		tagField: field + ".package_version.container_metadata.tag.name", digestField: digestField,
	}}}, nil
}
