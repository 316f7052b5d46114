package imageref

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const dg = "sha256:0b31b1c02ff458ad9b7b81cbdf8f028bd54699fa151f221d1e8de6817db93427"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Ref
	}{
		{"nginx", Ref{Registry: "docker.io", Repository: "library/nginx"}},
		{"nginx:1.25", Ref{Registry: "docker.io", Repository: "library/nginx", Tag: "1.25"}},
		{"docker.io/library/nginx", Ref{Registry: "docker.io", Repository: "library/nginx"}},
		{"index.docker.io/library/nginx:1.25", Ref{Registry: "docker.io", Repository: "library/nginx", Tag: "1.25"}},
		{"bitnami/redis:7", Ref{Registry: "docker.io", Repository: "bitnami/redis", Tag: "7"}},
		{"localhost:5000/shop/web:v1", Ref{Registry: "localhost:5000", Repository: "shop/web", Tag: "v1"}},
		{"127.0.0.1:39211/shop/web@" + dg, Ref{Registry: "127.0.0.1:39211", Repository: "shop/web", Digest: dg}},
		{"ghcr.io/Octo-Org/App:Latest", Ref{Registry: "ghcr.io", Repository: "octo-org/app", Tag: "Latest"}},
		{"Registry.Example:443/a/b:1.0@" + dg, Ref{Registry: "registry.example:443", Repository: "a/b", Tag: "1.0", Digest: dg}},
		{" nginx ", Ref{Registry: "docker.io", Repository: "library/nginx"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "nginx@sha256:short", "a//b", "-bad/x", "nginx:tag with space"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted it", in)
		}
	}
}

func TestSameRepository(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"nginx", "docker.io/library/nginx", true},
		{"nginx", "index.docker.io/library/nginx:1.25", true},
		{"nginx:1.25", "nginx@" + dg, true},
		{"nginx", "nginx-unprivileged", false},
		{"localhost:5000/web", "localhost:5001/web", false},
		{"library/nginx", "bitnami/nginx", false},
		{"", "nginx", false},
	}
	for _, tt := range tests {
		if got := SameRepository(tt.a, tt.b); got != tt.want {
			t.Errorf("SameRepository(%q, %q) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDigestOf(t *testing.T) {
	tests := map[string]string{
		"docker.io/library/nginx@" + dg: dg,
		"docker-pullable://nginx@" + dg: dg,
		dg:                              dg,
		"nginx:1.25":                    "",
		"":                              "",
	}
	for in, want := range tests {
		if got := DigestOf(in); got != want {
			t.Errorf("DigestOf(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, in := range []string{"docker.io/library/nginx:1.25", "localhost:5000/shop/web:v1@" + dg} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if r.String() != in {
			t.Errorf("String() = %q; want %q", r.String(), in)
		}
	}
}
