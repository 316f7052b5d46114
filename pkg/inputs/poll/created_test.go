package poll_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/inputs/poll"
	testregistry "github.com/inplace-dev/inplace/test/registry"
)

// The Dater reads an image's created time from its registry, with the pull
// secret's credentials where the registry wants them: of an image, of a
// multi-platform index (its first image's), and ErrNoImage for a digest the
// registry does not have.
func TestDaterReadsTheCreatedTime(t *testing.T) {
	w := newWorld(t)
	made := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	img, err := w.reg.Push(t.Context(), "team/app", "1.0.0", testregistry.WithCreated(made))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := w.reg.Push(t.Context(), "team/app", "1.1.0", testregistry.WithCreated(made.Add(time.Hour)),
		testregistry.WithPlatforms("linux/amd64", "linux/arm64"))
	if err != nil {
		t.Fatal(err)
	}
	host := proxy(t, w.reg.Host(), "robot", "s3cret", nil)
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))
	sec := secrets{"shop/pull": {Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + host + `":{"auth":"` + auth + `"}}}`)}}}
	d := &poll.Dater{Secrets: sec}
	for _, tc := range []struct {
		name, digest string
		want         time.Time
	}{{"an image", img, made}, {"an index", idx, made.Add(time.Hour)}} {
		got, err := d.Created(t.Context(), host+"/team/app@"+tc.digest, []string{"shop/pull"})
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%s: %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	if _, err := d.Created(t.Context(), host+"/team/app@"+img, nil); err == nil || errors.Is(err, poll.ErrNoImage) {
		t.Errorf("without the pull secret: %v; want the registry's refusal", err)
	}
	gone := "sha256:" + strings.Repeat("0", 64)
	if _, err := d.Created(t.Context(), host+"/team/app@"+gone, []string{"shop/pull"}); !errors.Is(err, poll.ErrNoImage) {
		t.Errorf("a digest the registry does not have: %v; want ErrNoImage", err)
	}
}
