package poll_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/pkg/inputs/keychain"
	"github.com/inplace-dev/inplace/pkg/inputs/poll"
	"github.com/inplace-dev/inplace/pkg/inputs/registry"
	testregistry "github.com/inplace-dev/inplace/test/registry"
	testworld "github.com/inplace-dev/inplace/test/world"
)

func mustPolicy(t *testing.T, s string) policy.Policy {
	t.Helper()
	p, err := policy.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ref(t *testing.T, s string) imageref.Ref {
	t.Helper()
	r, err := imageref.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSubscriptions(t *testing.T) {
	minor, digest := mustPolicy(t, "semver:minor"), mustPolicy(t, "digest")
	ws := []poll.Watch{
		{Workload: "a", Policy: digest, Interval: time.Minute, Secrets: []string{"ns/one"},
			Images: []imageref.Ref{ref(t, "reg.example/app:latest"), ref(t, "reg.example/sidecar@sha256:"+strings.Repeat("a", 64))}},
		{Workload: "b", Policy: digest, Interval: 30 * time.Second, Secrets: []string{"ns/two"},
			Images: []imageref.Ref{ref(t, "reg.example/app:latest")}},
		{Workload: "c", Policy: minor, Interval: time.Hour, Images: []imageref.Ref{ref(t, "reg.example/app:1.2.0")}},
		{Workload: "d", Policy: minor, Interval: 0, Images: []imageref.Ref{ref(t, "reg.example/other:1.0.0")}},
	}
	var got []string
	for _, s := range poll.Subscriptions(ws) {
		got = append(got, s.Key()+" "+s.Interval.String()+" "+strings.Join(s.Secrets, ",")+" "+
			strings.Join(s.Targets([]string{"1.2.0", "1.3.0", "2.0.0"}), ","))
	}
	want := []string{
		"reg.example/app 1h0m0s  1.3.0",             // semver: the tag list, the newest allowed
		"reg.example/app:latest 30s ns/one,ns/two ", // the running tag: the shortest interval, every secret
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscriptions (-want +got):\n%s", diff)
	}
}

// world is a real registry, a poller on a clock the test moves, and the
// events it publishes.
type world struct {
	t    *testing.T
	reg  *testregistry.Registry
	now  time.Time
	mu   sync.Mutex
	outs []cloudevents.Event
}

func newWorld(t *testing.T) *world {
	t.Helper()
	reg, err := testregistry.Start(t.Context(), testregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	return &world{t: t, reg: reg, now: time.Unix(1_700_000_000, 0)}
}

func (w *world) poller(watches []poll.Watch, secrets keychain.SecretGetter) *poll.Poller {
	return poll.New(poll.Deps{
		Watches: func() ([]poll.Watch, error) { return watches, nil },
		Secrets: secrets,
		Publish: func(_ context.Context, e cloudevents.Event) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.outs = append(w.outs, e)
			return nil
		},
		Now:    func() time.Time { return w.now },
		Jitter: func() float64 { return 0.5 },
	})
}

// announced are the pushes published so far, as tag@digest.
func (w *world) announced() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.outs {
		d, err := events.As[events.ImagePushedData](e)
		if err != nil {
			w.t.Fatal(err)
		}
		if e.ID() != events.PushID(d) || d.Origin != poll.Origin {
			w.t.Errorf("event %s: id is not events.PushID, or origin %q", e.ID(), d.Origin)
		}
		out = append(out, d.Tag+"@"+d.Digest)
	}
	return out
}

func (w *world) push(repo, tag string) string {
	w.t.Helper()
	d, err := w.reg.Push(w.t.Context(), repo, tag)
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// round runs the poller once, after moving the clock by d.
func (w *world) round(p *poll.Poller, d time.Duration) time.Time {
	w.now = w.now.Add(d)
	return p.Step(w.t.Context())
}

// A moving tag is announced once per digest, within its interval, with
// the id a webhook of the same push gets.
func TestPollFollowsATag(t *testing.T) {
	w := newWorld(t)
	var deliveries [][]byte
	var mu sync.Mutex
	hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		deliveries = append(deliveries, b)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	if err := w.reg.SetNotify(testregistry.Notify{URL: hook.URL, IgnoreActions: []string{"pull"}}); err != nil {
		t.Fatal(err)
	}
	d1 := w.push("team/app", "latest")
	watch := poll.Watch{Workload: "Deployment/ns/app", Policy: mustPolicy(t, "digest"), Interval: time.Minute,
		Images: []imageref.Ref{ref(t, w.reg.Host()+"/team/app:latest")}}
	p := w.poller([]poll.Watch{watch}, nil)
	if err := poll.Refresh(p, w.now); err != nil {
		t.Fatal(err)
	}
	next := w.round(p, 10*time.Second)
	if diff := cmp.Diff([]string{"latest@" + d1}, w.announced()); diff != "" {
		t.Fatalf("first poll (-want +got):\n%s", diff)
	}
	if got := next.Sub(w.now); got != time.Minute {
		t.Errorf("next poll in %s; want the interval, jittered: 1m", got)
	}
	w.round(p, time.Minute)
	if n := len(w.announced()); n != 1 {
		t.Errorf("an unchanged tag was announced again: %v", w.announced())
	}
	d2 := w.push("team/app", "latest")
	w.round(p, 30*time.Second)
	if n := len(w.announced()); n != 1 {
		t.Fatalf("polled before its interval: %v", w.announced())
	}
	w.round(p, 30*time.Second)
	if diff := cmp.Diff([]string{"latest@" + d1, "latest@" + d2}, w.announced()); diff != "" {
		t.Fatalf("after the push (-want +got):\n%s", diff)
	}

	// The registry's own notification of the second push names the same event.
	var webhookID string
	if err := testworld.Eventually(t.Context(), 30*time.Second, "the registry's notification of the second push", func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, body := range deliveries {
			res, err := registry.Parse(registry.Distribution, registry.Delivery{Body: body, Registry: w.reg.Host()})
			if err != nil {
				return false, err
			}
			for _, push := range res.Pushes {
				if push.Digest == d2 {
					webhookID = events.PushID(push)
				}
			}
		}
		return webhookID != "", nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := w.outs[1].ID(); got != webhookID {
		t.Errorf("poll event id %s, webhook event id %q: a webhook and a poll of one push must be one event", got, webhookID)
	}
}

// A semver policy lists the tags and announces the newest it allows.
func TestPollSemverListsTags(t *testing.T) {
	w := newWorld(t)
	for _, tag := range []string{"1.2.0", "1.2.9", "2.0.0", "latest"} {
		w.push("team/api", tag)
	}
	d13 := w.push("team/api", "1.3.0")
	watch := poll.Watch{Workload: "Deployment/ns/api", Policy: mustPolicy(t, "semver:minor"), Interval: time.Minute,
		Images: []imageref.Ref{ref(t, w.reg.Host()+"/team/api:1.2.0")}}
	p := w.poller([]poll.Watch{watch}, nil)
	if err := poll.Refresh(p, w.now); err != nil {
		t.Fatal(err)
	}
	w.round(p, 10*time.Second)
	if diff := cmp.Diff([]string{"1.3.0@" + d13}, w.announced()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// proxy stands in front of the registry: it may demand credentials and
// answer 429 (with Retry-After) the first times it is asked.
func proxy(t *testing.T, target string, user, pass string, throttled *atomic.Int32) string {
	t.Helper()
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if throttled != nil && throttled.Add(-1) >= 0 {
			rw.Header().Set("Retry-After", "7")
			http.Error(rw, `{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}`, http.StatusTooManyRequests)
			return
		}
		if u, p, ok := r.BasicAuth(); user != "" && (!ok || u != user || p != pass) {
			rw.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(rw, `{"errors":[{"code":"UNAUTHORIZED","message":"who are you"}]}`, http.StatusUnauthorized)
			return
		}
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// A 429 leaves the registry alone for its Retry-After, then polling goes on.
func TestPollBacksOffOn429(t *testing.T) {
	w := newWorld(t)
	d := w.push("team/app", "latest")
	var throttled atomic.Int32
	throttled.Store(1)
	host := proxy(t, w.reg.Host(), "", "", &throttled)
	watch := poll.Watch{Workload: "Deployment/ns/app", Policy: mustPolicy(t, "digest"), Interval: 2 * time.Second,
		Images: []imageref.Ref{ref(t, host+"/team/app:latest")}}
	p := w.poller([]poll.Watch{watch}, nil)
	if err := poll.Refresh(p, w.now); err != nil {
		t.Fatal(err)
	}
	next := w.round(p, time.Second)
	if len(w.announced()) != 0 {
		t.Fatal("announced through a 429")
	}
	if got := next.Sub(w.now); got != 7*time.Second {
		t.Errorf("next poll in %s; want the registry's Retry-After, 7s (not the 2s interval)", got)
	}
	w.round(p, 3*time.Second)
	if len(w.announced()) != 0 || throttled.Load() != 0 {
		t.Fatalf("polled a backed-off registry before its Retry-After (throttle %d)", throttled.Load())
	}
	w.round(p, 4*time.Second)
	if diff := cmp.Diff([]string{"latest@" + d}, w.announced()); diff != "" {
		t.Fatalf("after the back-off (-want +got):\n%s", diff)
	}
}

type secrets map[string]*corev1.Secret

func (s secrets) Get(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if sec, ok := s[ns+"/"+name]; ok {
		return sec, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

// A registry that wants credentials is asked with the pods' pull secret.
func TestPollUsesPullSecrets(t *testing.T) {
	w := newWorld(t)
	d := w.push("team/app", "latest")
	host := proxy(t, w.reg.Host(), "robot", "s3cret", nil)
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))
	sec := secrets{"shop/pull": {Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		corev1.DockerConfigJsonKey: []byte(`{"auths":{"https://` + host + `/v2/":{"auth":"` + auth + `"}},"credsStore":"never-run"}`)}}}
	img := []imageref.Ref{ref(t, host+"/team/app:latest")}
	anonymous := w.poller([]poll.Watch{{Workload: "a", Policy: mustPolicy(t, "digest"), Interval: time.Minute, Images: img}}, sec)
	if err := poll.Refresh(anonymous, w.now); err != nil {
		t.Fatal(err)
	}
	w.round(anonymous, 10*time.Second)
	if len(w.announced()) != 0 {
		t.Fatal("announced without credentials")
	}
	withSecret := w.poller([]poll.Watch{{Workload: "a", Policy: mustPolicy(t, "digest"), Interval: time.Minute, Images: img,
		Secrets: []string{"shop/pull"}}}, sec)
	if err := poll.Refresh(withSecret, w.now); err != nil {
		t.Fatal(err)
	}
	w.round(withSecret, 10*time.Second)
	if diff := cmp.Diff([]string{"latest@" + d}, w.announced()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
