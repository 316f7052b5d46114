package knative_test

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inplace-dev/inplace/test/knative"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { knative.Main(m, world.Options{}) }

func TestBrokerSmoke(t *testing.T) {
	n := knative.Shared(t)
	ctx := t.Context()
	ns := n.World.NewNamespace(t)
	var mu sync.Mutex
	got := map[string]int{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Header.Get("Ce-Id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cm := obj("v1", "ConfigMap", ns, "channel", map[string]any{})
	cm.Object["data"] = map[string]any{"channel-template-spec": "apiVersion: messaging.knative.dev/v1\nkind: InMemoryChannel\n"}
	broker := obj("eventing.knative.dev/v1", "Broker", ns, "b", map[string]any{
		"config":   map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "channel", "namespace": ns},
		"delivery": map[string]any{"retry": int64(3), "backoffPolicy": "linear", "backoffDelay": "PT1S"}})
	broker.SetAnnotations(map[string]string{"eventing.knative.dev/broker.class": "MTChannelBasedBroker"})
	trigger := obj("eventing.knative.dev/v1", "Trigger", ns, "t", map[string]any{"broker": "b",
		"filter":     map[string]any{"attributes": map[string]any{"type": "test.smoke"}},
		"subscriber": map[string]any{"uri": "http://" + ln.Addr().String() + "/"}})
	trigger.SetLabels(map[string]string{"eventing.knative.dev/broker": "b"})
	if err := n.Create(ctx, cm, broker, trigger); err != nil {
		t.Fatal(err)
	}
	b, err := n.WaitReady(ctx, knative.Brokers, ns, "b", 2*time.Minute)
	if err != nil {
		t.Fatalf("%v\n%s", err, n.Logs(20))
	}
	if _, err := n.WaitReady(ctx, knative.Triggers, ns, "t", 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, n.Logs(20))
	}
	t.Logf("broker at %s", knative.Address(b))
	c, err := n.Client()
	if err != nil {
		t.Fatal(err)
	}
	e := cloudevents.NewEvent()
	e.SetID("smoke-1")
	e.SetType("test.smoke")
	e.SetSource("test")
	res := c.Send(cloudevents.ContextWithTarget(ctx, knative.Address(b)), e)
	t.Logf("send: %v", res)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		k := got["smoke-1"]
		mu.Unlock()
		if k > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("not delivered\n%s", n.Logs(30))
}

func obj(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	if len(spec) > 0 {
		u.Object["spec"] = spec
	}
	return u
}
