package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSameImage(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"nginx:1.25", "docker.io/library/nginx:1.25", true},
		{"nginx:1.25", "index.docker.io/library/nginx:1.25", true},
		{"nginx", "docker.io/library/nginx:latest", true},
		{"nginx:1.25@" + dgNew, "docker.io/library/nginx@" + dgNew, true},
		{"nginx:1.25@" + dgNew, "docker.io/library/nginx:1.25", true},
		{"nginx:1.25", "nginx:1.26", false},
		{"nginx:1.25", "bitnami/nginx:1.25", false},
		{"sha256:abc", "sha256:abc", true},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			if got := sameImage(tt.a, tt.b); got != tt.want {
				t.Errorf("sameImage = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestNameAsWritten(t *testing.T) {
	tests := map[string]string{
		"nginx":                               "nginx",
		"nginx:1.25":                          "nginx",
		"index.docker.io/library/nginx:1.25":  "index.docker.io/library/nginx",
		"localhost:5000/shop/web":             "localhost:5000/shop/web",
		"localhost:5000/shop/web:v1@" + dgOld: "localhost:5000/shop/web",
		"Registry.Example:443/a/b@" + dgOld:   "Registry.Example:443/a/b",
	}
	got := map[string]string{}
	for in := range tests {
		got[in] = nameAsWritten(in)
	}
	if diff := cmp.Diff(tests, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
