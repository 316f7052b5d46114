package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/pkg/config"
)

// The API server answers 503 to every write patch-pod makes to one pod for
// longer than patch-pod's failure budget: that delivery is dead-lettered.
// Then the API server recovers. The watchdog's reminder is a new try of
// its own (its plan, pre-pull's image.prepulled and patch-pod's pod.patched
// all have that try's ids), so it reaches patch-pod past the dead letter
// still in the stream's dedup window, and the rollout completes with every
// pod on the target, none replaced.
func TestAnAPIOutageLongerThanTheBudgetEndsInACompletedRollout(t *testing.T) {
	outage := &podOutage{}
	e := newEnvWith(t, func(p *config.Process) {
		p.WrapTransport = outage.wrap
		p.WatchdogPeriod = time.Second
	})
	e.withConfig(map[string]string{"prepull-timeout": "20s", "watchdog-slack": "2s", "watchdog-remind-every": "5s",
		"watchdog-reminders": "6"})
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 3, image: e.ref("shop", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	before := e.pods("web")
	outage.start(e.ns)
	digest := e.push("shop", "1.1.0")

	e.waitDeadLetter(patchpod.Name, "the API server is unavailable", 2*time.Minute)
	victim, failed := outage.stop()
	t.Logf("the API server answered %d writes of patch-pod to %s with 503; patch-pod dead-lettered the delivery", failed, victim)

	done := e.waitEvent(events.RolloutCompleted, "/web", 3*time.Minute)
	e.waitAllOn("web", 3, digest, time.Minute)
	d, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	if d.Counts.Succeeded != 3 || d.Counts.Failed != 0 || !d.TemplateSynced {
		t.Errorf("rollout.completed: counts %+v, templateSynced %v; want 3 succeeded and the template synced", d.Counts, d.TemplateSynced)
	}
	for name, p := range e.pods("web") {
		if b, ok := before[name]; !ok || b.UID != p.UID {
			t.Errorf("pod %s was replaced", name)
		}
	}
	tries := map[int]bool{}
	for _, ev := range e.stream(events.ImagePrepulled) {
		if p, err := events.As[events.PrepulledData](ev); err == nil && p.Plan.Pod.Name == victim {
			tries[p.Plan.Attempt] = true
		}
	}
	if len(tries) < 2 {
		t.Errorf("image.prepulled of %s for tries %v; want the first and a reminder's", victim, tries)
	}
}

// podOutage fails patch-pod's writes to the first pod of a namespace it
// sees one for, with 503 Service Unavailable, while it is on.
type podOutage struct {
	on     atomic.Bool
	mu     sync.Mutex
	ns     string
	victim string
	failed int
}

func (o *podOutage) start(ns string) {
	o.mu.Lock()
	o.ns = ns
	o.mu.Unlock()
	o.on.Store(true)
}

// stop ends the outage: the pod it hit and how many writes it failed.
func (o *podOutage) stop() (string, int) {
	o.on.Store(false)
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.victim, o.failed
}

func (o *podOutage) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if o.on.Load() && o.fails(r) {
			return unavailable(r), nil
		}
		return rt.RoundTrip(r)
	})
}

// fails reports whether r is a write of patch-pod to the victim pod.
func (o *podOutage) fails(r *http.Request) bool {
	if r.Method == http.MethodGet || r.URL.Query().Get("fieldManager") != patchpod.FieldManager {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	prefix := "/api/v1/namespaces/" + o.ns + "/pods/"
	name, ok := strings.CutPrefix(r.URL.Path, prefix)
	if !ok {
		return false
	}
	name, _, _ = strings.Cut(name, "/")
	if o.victim == "" {
		o.victim = name
	}
	if name != o.victim {
		return false
	}
	o.failed++
	return true
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// unavailable is the API server's 503 answer, a metav1.Status.
func unavailable(r *http.Request) *http.Response {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: http.StatusServiceUnavailable, Reason: metav1.StatusReasonServiceUnavailable, Message: "injected by the test: the API server is unavailable"}
	b, _ := json.Marshal(st)
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: r}
}
