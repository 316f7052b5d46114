package registry

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

const dg = "sha256:0b31b1c02ff458ad9b7b81cbdf8f028bd54699fa151f221d1e8de6817db93427"

func TestCanonical(t *testing.T) {
	tests := []struct {
		name     string
		p        rawPush
		override string
		want     events.ImagePushedData
	}{
		{"docker hub official image", rawPush{host: "docker.io", repo: "nginx", tag: "1.27"}, "",
			events.ImagePushedData{Registry: "docker.io", Repository: "library/nginx", Tag: "1.27"}},
		{"docker hub alias", rawPush{host: "Index.Docker.IO", repo: "Bitnami/Redis", tag: "7"}, "",
			events.ImagePushedData{Registry: "docker.io", Repository: "bitnami/redis", Tag: "7"}},
		{"port kept, case folded, tag case kept", rawPush{host: "Registry.Example:5000", repo: "/Team/App/", tag: "V1.2-RC"}, "",
			events.ImagePushedData{Registry: "registry.example:5000", Repository: "team/app", Tag: "V1.2-RC"}},
		{"host without a dot stays the host", rawPush{host: "harbor", repo: "nginx", tag: "1"}, "",
			events.ImagePushedData{Registry: "harbor", Repository: "nginx", Tag: "1"}},
		{"scheme stripped", rawPush{host: "https://art.example.com/", repo: "a/b", tag: "1"}, "",
			events.ImagePushedData{Registry: "art.example.com", Repository: "a/b", Tag: "1"}},
		{"tag that is a digest", rawPush{host: "h.example", repo: "a", tag: dg}, "",
			events.ImagePushedData{Registry: "h.example", Repository: "a", Digest: dg}},
		{"override replaces the host", rawPush{host: "registry.internal", repo: "team/app", tag: "v1", digest: dg}, "registry.example.com:443", events.ImagePushedData{Registry: "registry.example.com:443", Repository: "team/app", Tag: "v1", Digest: dg}},
		{"override with a path", rawPush{host: "docker.io", repo: "nginx", tag: "1"}, "mirror.local/hub", events.ImagePushedData{Registry: "mirror.local", Repository: "hub/nginx", Tag: "1"}},
		{"IPv6 host", rawPush{host: "[::1]:5000", repo: "a", tag: "1"}, "", events.ImagePushedData{Registry: "[::1]:5000", Repository: "a", Tag: "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.canonical("test", tt.override)
			if err != nil {
				t.Fatalf("canonical: %v", err)
			}
			tt.want.Origin = "test"
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCanonicalErrorsNameTheField(t *testing.T) {
	f := rawPush{hostField: "h", repoField: "r", tagField: "t", digestField: "d"}
	with := func(host, repo, tag string) rawPush { p := f; p.host, p.repo, p.tag = host, repo, tag; return p }
	withDigest := func(digest string) rawPush { p := with("h.example", "a", "1"); p.digest = digest; return p }
	tests := []struct {
		name  string
		p     rawPush
		field string
	}{
		{"no host", with("", "a", "1"), "h"},
		{"bad host", with("exa mple.com", "a", "1"), "h"},
		{"no repository", with("h.example", " / ", "1"), "r"},
		{"repository with a tag", with("h.example", "a:1", "1"), "r"},
		{"bad repository", with("h.example", "a//b", "1"), "r"},
		{"bad tag", with("h.example", "a", "no spaces"), "t"},
		{"another algorithm", withDigest("md5:abcd"), "d"},
		{"a short digest", withDigest("sha256:" + strings.Repeat("a", 63)), "d"},
		{"a long digest", withDigest("sha256:" + strings.Repeat("a", 65)), "d"},
		{"a digest not hex", withDigest("sha256:" + strings.Repeat("g", 64)), "d"},
		{"an upper-case digest", withDigest("sha256:" + strings.Repeat("A", 64)), "d"},
		{"a malformed digest in the tag", with("h.example", "a", "sha256:abc123"), "t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.p.canonical("test", "")
			var fe *events.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("err = %v; want a FieldError on %q", err, tt.field)
			}
		})
	}
}

func TestSaneTime(t *testing.T) {
	tests := map[string]time.Time{
		"0001-01-01T00:00:00Z":      {},
		"9999-12-31T23:00:00-05:00": {}, // year 10000 in UTC: JSON cannot carry it
		"2026-05-01T14:00:00+02:00": time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		"not a time":                {},
	}
	for in, want := range tests {
		if got := sane(rfc3339(in)); !got.Equal(want) {
			t.Errorf("sane(%q) = %v; want %v", in, got, want)
		}
	}
}

func TestDistributionEnvelopeKeepsOnlyTaggedManifests(t *testing.T) {
	body := []byte(`{"events":[
	 {"action":"push","target":{"mediaType":"application/octet-stream","digest":"` + dg + `","repository":"team/app"},"request":{"host":"reg.example:5000"}},
	 {"action":"push","target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + dg + `","repository":"team/app"},"request":{"host":"reg.example:5000"}},
	 {"action":"push","target":{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"` + dg + `","repository":"team/app","tag":"v2","url":"http://reg.example:5000/v2/team/app/manifests/v2"},"request":{}},
	 {"action":"push","target":{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"` + dg + `","repository":"team/app","tag":"v2"},"request":{"host":"reg.example:5000"}},
	 {"action":"pull","target":{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"` + dg + `","repository":"team/app","tag":"v2"},"request":{"host":"reg.example:5000"}}]}`)
	r, err := Parse(Distribution, Delivery{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := []events.ImagePushedData{{Registry: "reg.example:5000", Repository: "team/app", Tag: "v2", Digest: dg, Origin: "distribution"}}
	if diff := cmp.Diff(want, r.Pushes); diff != "" {
		t.Errorf("one push (host from target.url, the repeat dropped); (-want +got):\n%s", diff)
	}
}

func TestFormEncodedGitHubDelivery(t *testing.T) {
	body := []byte("payload=%7B%22action%22%3A%22published%22%2C%22package%22%3A%7B%22name%22%3A%22Web%22%2C%22package_type%22%3A%22CONTAINER%22%2C%22owner%22%3A%7B%22login%22%3A%22Acme%22%7D%2C%22package_version%22%3A%7B%22container_metadata%22%3A%7B%22tag%22%3A%7B%22name%22%3A%221.0%22%7D%7D%7D%7D%7D")
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Github-Event": {"package"}}
	r, err := Parse(GHCR, Delivery{Header: h, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pushes) != 1 || r.Pushes[0].Ref() != "ghcr.io/acme/web:1.0" {
		t.Fatalf("got %+v", r)
	}
}

func TestHarborBinaryModeCloudEvent(t *testing.T) {
	h := http.Header{"Ce-Type": {"harbor.artifact.pushed"}, "Ce-Time": {"2023-04-03T06:04:46Z"}, "Ce-Specversion": {"1.0"}}
	body := []byte(`{"resources":[{"digest":"` + dg + `","tag":"1.0","resource_url":"harbor.example/proj/app:1.0"}],"repository":{"repo_full_name":"proj/app"}}`)
	r, err := Parse(Harbor, Delivery{Header: h, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := []events.ImagePushedData{{Registry: "harbor.example", Repository: "proj/app", Tag: "1.0", Digest: dg,
		PushedAt: time.Date(2023, 4, 3, 6, 4, 46, 0, time.UTC), Origin: "harbor"}}
	if diff := cmp.Diff(want, r.Pushes); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseUnknownFormat(t *testing.T) {
	if _, err := Parse("nexus", Delivery{Body: []byte(`{}`)}); err == nil {
		t.Fatal("an unknown format was parsed")
	}
	if ParserOf("nexus") != nil || ParserOf(Quay) == nil {
		t.Fatal("ParserOf")
	}
}
