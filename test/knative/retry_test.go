package knative_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inplace-dev/inplace/test/knative"
)

// scripted is a subscriber that answers each delivery as its script says
// and remembers when each event id came.
type scripted struct {
	URL    string
	answer func(id string, attempt int) (status int, retryAfter string)

	mu   sync.Mutex
	got  map[string][]time.Time
	wake chan struct{}
}

func newScripted(t *testing.T, answer func(id string, attempt int) (int, string)) *scripted {
	t.Helper()
	s := &scripted{answer: answer, got: map[string][]time.Time{}, wake: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	s.URL = "http://" + ln.Addr().String() + "/"
	return s
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Ce-Id")
	s.mu.Lock()
	s.got[id] = append(s.got[id], time.Now())
	n := len(s.got[id])
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
	status, after := s.answer(id, n)
	if after != "" {
		w.Header().Set("Retry-After", after)
	}
	w.WriteHeader(status)
}

// deliveries are the times id was delivered.
func (s *scripted) deliveries(id string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.got[id]...)
}

// waitFor waits until id was delivered n times.
func (s *scripted) waitFor(t *testing.T, id string, n int, within time.Duration) []time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	for {
		s.mu.Lock()
		got, wake := append([]time.Time(nil), s.got[id]...), s.wake
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("%s delivered %d times within %s, want %d", id, len(got), within, n)
		}
	}
}

// The retry contract of the functions (permanent → 422, not yet → 503 with
// Retry-After) as the real Broker of config/knative keeps it: a 503 is
// delivered again with the Broker's backoff (linear, PT2S: at once, then
// +2 s, +4 s, ...; Retry-After is not honoured without retryAfterMax), a
// 422 never.
// Both are answered 202 at once, as the in-memory channel runs in its
// asynchronous mode here (see Local), like the JetStream channel.
func TestRetryContract(t *testing.T) {
	p := project(t)
	ctx := t.Context()
	s := newScripted(t, func(id string, attempt int) (int, string) {
		if id == "retry-503" && attempt < 3 {
			return http.StatusServiceUnavailable, "1"
		}
		if id == "retry-422" {
			return http.StatusUnprocessableEntity, ""
		}
		return http.StatusOK, ""
	})
	trigger := triggerTo(knative.Namespace, "inplace-test-retry", knative.BrokerName, "dev.inplace.test.retry", s.URL)
	if err := p.Node.Create(ctx, trigger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTrigger(p.Node, knative.Namespace, "inplace-test-retry") })
	if _, err := p.Node.WaitReady(ctx, knative.Triggers, knative.Namespace, "inplace-test-retry", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	probe(t, p.Node, p.Broker, "dev.inplace.test.retry", s)
	for _, id := range []string{"retry-422", "retry-503"} {
		if status := send(t, p.Node, p.Broker, id); status != http.StatusAccepted {
			t.Errorf("the Broker answered %s with %d, want 202 at once", id, status)
		}
	}
	got := s.waitFor(t, "retry-503", 3, 2*time.Minute)
	t.Logf("the 503 was redelivered %s and %s after the delivery before", got[1].Sub(got[0]).Round(time.Millisecond),
		got[2].Sub(got[1]).Round(time.Millisecond))
	// Linear PT2S as Knative counts it: retry n (from 0) waits n × 2 s.
	if gap := got[2].Sub(got[1]); gap < 2*time.Second-100*time.Millisecond {
		t.Errorf("the second redelivery came %s after the first; the Broker's linear PT2S backoff says at least 2s", gap)
	}
	// The 422 was sent first; a retry of it, had there been one, was due
	// at once, and at the latest 2 s later: before the 503's third delivery.
	if n := len(s.deliveries("retry-422")); n != 1 {
		t.Errorf("the 422 was delivered %d times, want once (never retried)", n)
	}
}

// The in-memory channel's default, synchronous mode (no async-handler
// annotation): the sender waits through every retry, and a subscriber's
// 422 reaches it as an error; hence Local's asynchronous mode.
func TestInMemoryChannelSynchronous(t *testing.T) {
	n := knative.Shared(t)
	ctx := t.Context()
	ns := n.World.NewNamespace(t)
	s := newScripted(t, func(id string, attempt int) (int, string) {
		if id == "sync-503" && attempt < 2 {
			return http.StatusServiceUnavailable, ""
		}
		if id == "sync-422" {
			return http.StatusUnprocessableEntity, ""
		}
		return http.StatusOK, ""
	})
	cm := object("v1", "ConfigMap", ns, "channel", nil)
	cm.Object["data"] = map[string]any{"channel-template-spec": "apiVersion: messaging.knative.dev/v1\nkind: InMemoryChannel\n"}
	broker := object("eventing.knative.dev/v1", "Broker", ns, "sync", map[string]any{
		"config":   map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "channel", "namespace": ns},
		"delivery": map[string]any{"retry": int64(3), "backoffPolicy": "linear", "backoffDelay": "PT1S"}})
	broker.SetAnnotations(map[string]string{"eventing.knative.dev/broker.class": "MTChannelBasedBroker"})
	if err := n.Create(ctx, cm, broker, triggerTo(ns, "t", "sync", "dev.inplace.test.sync", s.URL)); err != nil {
		t.Fatal(err)
	}
	b, err := n.WaitReady(ctx, knative.Brokers, ns, "sync", 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.WaitReady(ctx, knative.Triggers, ns, "t", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	probe(t, n, knative.Address(b), "dev.inplace.test.sync", s)
	if status := sendType(t, n, knative.Address(b), "sync-503", "dev.inplace.test.sync"); status != http.StatusAccepted {
		t.Errorf("sync-503: the Broker answered %d, want 202 once delivered", status)
	}
	if got := len(s.deliveries("sync-503")); got != 2 {
		t.Errorf("the Broker answered the sender after %d deliveries; want 2 (it waited through the retry)", got)
	}
	status := sendType(t, n, knative.Address(b), "sync-422", "dev.inplace.test.sync")
	if status < 500 {
		t.Errorf("sync-422: the sender got %d; want a 5xx (the channel reports a failed subscriber so)", status)
	}
	t.Logf("a subscriber's 422 reached the sender as %d", status)
}

// probe sends events of typ (answered 200) until one reaches s: a Trigger
// is Ready before the channel dispatcher delivers to it, and what is sent
// in between reaches everyone but it.
func probe(t *testing.T, n *knative.Node, target, typ string, s *scripted) {
	t.Helper()
	for i := range 60 {
		id := fmt.Sprintf("probe-%d", i)
		sendType(t, n, target, id, typ)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		for len(s.deliveries(id)) == 0 && ctx.Err() == nil {
			s.mu.Lock()
			wake := s.wake
			s.mu.Unlock()
			select {
			case <-wake:
			case <-ctx.Done():
			}
		}
		cancel()
		if len(s.deliveries(id)) > 0 {
			return
		}
	}
	t.Fatalf("no %s event reached the subscriber in a minute", typ)
}

func triggerTo(ns, name, broker, typ, uri string) *unstructured.Unstructured {
	t := object("eventing.knative.dev/v1", "Trigger", ns, name, map[string]any{"broker": broker,
		"filter":     map[string]any{"attributes": map[string]any{"type": typ}},
		"subscriber": map[string]any{"uri": uri}})
	t.SetLabels(map[string]string{"eventing.knative.dev/broker": broker})
	return t
}

func deleteTrigger(n *knative.Node, ns, name string) {
	_ = n.Dynamic().Resource(knative.Triggers).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
}

func object(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func send(t *testing.T, n *knative.Node, target, id string) int {
	return sendType(t, n, target, id, "dev.inplace.test.retry")
}

// sendType posts one event to target through the node's proxy and returns
// the HTTP status.
func sendType(t *testing.T, n *knative.Node, target, id, typ string) int {
	t.Helper()
	c, err := n.Client()
	if err != nil {
		t.Fatal(err)
	}
	e := cloudevents.NewEvent()
	e.SetID(id)
	e.SetType(typ)
	e.SetSource("test/knative")
	res := c.Send(cloudevents.ContextWithTarget(t.Context(), target), e)
	var r *cehttp.Result
	if cloudevents.ResultAs(res, &r) {
		return r.StatusCode
	}
	t.Fatalf("send %s: %v", id, res)
	return 0
}
