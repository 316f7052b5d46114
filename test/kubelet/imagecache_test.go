package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestCanonical(t *testing.T) {
	tests := []struct{ in, ref, repo string }{
		{"nginx", "docker.io/library/nginx:latest", "docker.io/library/nginx"},
		{"nginx:1.25", "docker.io/library/nginx:1.25", "docker.io/library/nginx"},
		{"127.0.0.1:5000/App/web:V1", "127.0.0.1:5000/app/web:V1", "127.0.0.1:5000/app/web"},
		{"reg.test/app@" + dig1, "reg.test/app@" + dig1, "reg.test/app"},
	}
	for _, tc := range tests {
		ref, repo, err := canonical(tc.in)
		if err != nil || ref != tc.ref || repo != tc.repo {
			t.Errorf("canonical(%q) = %q, %q, %v; want %q, %q", tc.in, ref, repo, err, tc.ref, tc.repo)
		}
	}
	if _, _, err := canonical("Bad Image!"); err == nil {
		t.Error("canonical of an invalid name: want an error")
	}
}

func TestPullTiming(t *testing.T) {
	tm := Timings{PullFixed: 100 * time.Millisecond, PullPerMB: 10 * time.Millisecond, SerialPulls: true}
	big := Image{Digest: dig1, Size: 50 << 20}
	tests := []struct {
		name     string
		image    string
		img      Image
		at       time.Duration // after t0
		wantDone time.Duration // after t0
	}{
		{"first pull: fixed + 50MiB", imgV1, big, 0, 600 * time.Millisecond},
		{"same digest, other tag: queued, then layers present", "reg.test/app:latest", big, 0, 700 * time.Millisecond},
		{"other image waits for the puller", imgV2, Image{Digest: dig2, Size: 10 << 20}, 0, 900 * time.Millisecond},
		{"digest already here: fixed cost only", imgV1, big, time.Second, 1100 * time.Millisecond},
	}
	c := newImageCache()
	for _, tc := range tests {
		pr, err := c.pull(tc.image, tc.img, t0.Add(tc.at), tm)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := pr.done.Sub(t0); got != tc.wantDone {
			t.Errorf("%s: done after %v, want %v", tc.name, got, tc.wantDone)
		}
	}
	if _, _, ok := c.present(imgV1, t0.Add(500*time.Millisecond)); ok {
		t.Error("image present before its pull completed")
	}
	if img, id, ok := c.present(imgV1, t0.Add(2*time.Second)); !ok || img.Digest != dig1 || id != "reg.test/app@"+dig1 {
		t.Errorf("present(v1) = %+v %q %v, want %s", img, id, ok, dig1)
	}
}

func TestNodeImagesList(t *testing.T) {
	tm := Timings{}
	c := newImageCache()
	mustPull := func(image string, img Image) {
		if _, err := c.pull(image, img, t0, tm); err != nil {
			t.Fatal(err)
		}
	}
	mustPull(imgV1, Image{Digest: dig1, Size: 10})
	mustPull("reg.test/app:stable", Image{Digest: dig1, Size: 10})
	mustPull(imgV2, Image{Digest: dig2, Size: 20})
	mustPull("reg.test/app:stable", Image{Digest: dig2, Size: 20}) // the tag moves to v2's digest
	want := []corev1.ContainerImage{
		{Names: []string{"reg.test/app@" + dig2, "reg.test/app:stable", "reg.test/app:v2"}, SizeBytes: 20},
		{Names: []string{"reg.test/app@" + dig1, "reg.test/app:v1"}, SizeBytes: 10},
	}
	if diff := cmp.Diff(want, c.list(t0)); diff != "" {
		t.Errorf("node images (-want +got):\n%s", diff)
	}
}

// TestNodeImagesListedAfterRefresh: node.status.images shows a pull only
// once the node's image list is refreshed after the pull completed.
func TestNodeImagesListedAfterRefresh(t *testing.T) {
	n, err := newNode("node-0", 0, "10.244.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	tm := Timings{PullFixed: time.Second}
	if _, err := n.cache.pull(imgV1, Image{Digest: dig1, Size: 10}, t0, tm); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		at          time.Duration
		wantChanged bool
		wantListed  int
	}{
		{0, false, 0},                      // the pull is still running
		{500 * time.Millisecond, false, 0}, // still
		{time.Second, true, 1},             // done: the refresh lists it
		{2 * time.Second, false, 1},        // nothing new
	}
	for _, s := range steps {
		if got := n.refreshImages(t0.Add(s.at)); got != s.wantChanged {
			t.Errorf("refresh at %v: changed %v, want %v", s.at, got, s.wantChanged)
		}
		if got := len(n.listedImages()); got != s.wantListed {
			t.Errorf("after refresh at %v: %d images listed, want %d", s.at, got, s.wantListed)
		}
	}
}
