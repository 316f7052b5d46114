package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/inputs/poll"
	"github.com/inplace-dev/inplace/pkg/inputs/registry"
	testregistry "github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// capture is a notification endpoint that keeps the registry's webhooks
// from the receiver: they are recorded, for the test to deliver later.
type capture struct {
	mu         sync.Mutex
	bodies     [][]byte
	headers    []http.Header
	registryID string
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies, c.headers = append(c.bodies, b), append(c.headers, r.Header.Clone())
}

// of returns the captured delivery announcing digest.
func (c *capture) of(host, digest string) ([]byte, http.Header, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, b := range c.bodies {
		res, err := registry.Parse(registry.Distribution, registry.Delivery{Body: b, Registry: host})
		if err != nil {
			continue
		}
		for _, p := range res.Pushes {
			if p.Digest == digest {
				return b, c.headers[i], true
			}
		}
	}
	return nil, nil, false
}

// With webhooks off, a tag moved in the registry is found by polling and
// rolled out; when the webhook of the same push is delivered afterwards,
// it is the same event (the stream drops it): one image.pushed, one
// rollout, one restart per pod. Without the poller the pods would stay on
// the old digest (nothing else announces the push).
func TestPollWithoutWebhooks(t *testing.T) {
	e := newEnv(t)
	e.push("polled", "latest")
	e.deploy(workload{name: "polled", replicas: 2, image: e.ref("polled", "latest"),
		annotations: map[string]string{"inplace.dev/policy": "digest", "inplace.dev/max-unavailable": "2",
			"inplace.dev/poll-interval": "2s"}})
	before := e.pods("polled")

	hooks := &capture{}
	srv := httptest.NewServer(hooks)
	t.Cleanup(srv.Close)
	if err := e.w.Registry.SetNotify(testregistry.Notify{URL: srv.URL, IgnoreActions: []string{"pull"}}); err != nil {
		t.Fatal(err)
	}
	d2 := e.push("polled", "latest")
	e.waitAllOn("polled", 2, d2, 3*time.Minute)
	pushed := e.pushesOf(d2)
	if len(pushed) != 1 || pushed[0].Origin != poll.Origin {
		t.Fatalf("image.pushed of %s: %+v; want one, from the poller", d2, pushed)
	}
	e.waitEvent(events.RolloutCompleted, "/polled", time.Minute)

	// Now the webhook of the same push arrives after all.
	var body []byte
	var hdr http.Header
	err := world.Eventually(t.Context(), 30*time.Second, "the registry's webhook of the push", func(context.Context) (bool, error) {
		var ok bool
		body, hdr, ok = hooks.of(e.w.Registry.Host(), d2)
		return ok, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	published := e.counter(`inplace_receiver_events_published_total{route="registry"}`)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.s.HooksURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", hdr.Get("Content-Type"))
	req.Header.Set("Authorization", "Bearer "+e.s.HooksToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("late webhook: %s", resp.Status)
	}
	if got := e.counter(`inplace_receiver_events_published_total{route="registry"}`); got != published+1 {
		t.Errorf("the receiver published %v events for the late webhook; want 1", got-published)
	}
	e.settled(time.Minute)

	if pushed := e.pushesOf(d2); len(pushed) != 1 {
		t.Errorf("image.pushed of %s: %d events; want 1 (the webhook and the poll are one event)", d2, len(pushed))
	}
	completed := 0
	for _, ev := range e.stream(events.RolloutCompleted) {
		if ev.Subject() == "Deployment/"+e.ns+"/polled" {
			completed++
		}
	}
	if completed != 1 {
		t.Errorf("rollout.completed for polled: %d; want 1", completed)
	}
	for name, p := range e.pods("polled") {
		if b, ok := before[name]; !ok || b.UID != p.UID || p.RestartCount != b.RestartCount+1 {
			t.Errorf("pod %s: before %+v, after %+v; want the same pod restarted once", name, b, p)
		}
	}
}

// pushesOf returns the image.pushed events of digest on the stream.
func (e *env) pushesOf(digest string) []events.ImagePushedData {
	e.t.Helper()
	var out []events.ImagePushedData
	for _, ev := range e.stream(events.ImagePushed) {
		d, err := events.As[events.ImagePushedData](ev)
		if err != nil {
			e.t.Fatal(err)
		}
		if d.Digest == digest {
			out = append(out, d)
		}
	}
	return out
}
