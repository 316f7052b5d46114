package restart

import (
	"strings"
	"testing"
)

const d = "sha256:0b31b1c02ff458ad9b7b81cbdf8f028bd54699fa151f221d1e8de6817db93427"
const other = "sha256:5b0bcabd1ed22e9fb1310cf6c2dec7cdef19f0ad69efa1f392e94a4333501270"

func TestFlip(t *testing.T) {
	tests := []struct {
		name, spec, previous, want, err string
	}{
		{name: "tag pins the running digest", spec: "127.0.0.1:5000/shop:1.0", want: "127.0.0.1:5000/shop:1.0@" + d},
		{name: "tag@digest drops the tag", spec: "127.0.0.1:5000/shop:1.0@" + d, want: "127.0.0.1:5000/shop@" + d},
		{name: "digest goes back to what it was", spec: "127.0.0.1:5000/shop@" + d, previous: "127.0.0.1:5000/shop:1.0@" + d,
			want: "127.0.0.1:5000/shop:1.0@" + d},
		{name: "short name to qualified", spec: "nginx@" + d, want: "docker.io/library/nginx@" + d},
		{name: "qualified name to short", spec: "docker.io/library/nginx@" + d, want: "nginx@" + d},
		{name: "previous of another digest is not used", spec: "nginx@" + d, previous: "nginx:1@" + other,
			want: "docker.io/library/nginx@" + d},
		{name: "one spelling only", spec: "127.0.0.1:5000/shop@" + d, err: "no second reference"},
		{name: "spec pins another digest", spec: "127.0.0.1:5000/shop:1.0@" + other, err: "being changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Flip(tt.spec, d, tt.previous)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Flip = %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Flip = %q, %v; want %q", got, err, tt.want)
			}
			back, err := Flip(got, d, tt.spec)
			if err != nil || back != tt.spec && !strings.HasSuffix(tt.name, "pins the running digest") {
				t.Errorf("flip back = %q, %v; want %q", back, err, tt.spec)
			}
		})
	}
}

func TestFlipNeedsRunningDigest(t *testing.T) {
	if _, err := Flip("nginx:1", "", ""); err == nil {
		t.Fatal("Flip without a running digest: no error")
	}
}
