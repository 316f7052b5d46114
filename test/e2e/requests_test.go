package e2e_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
)

// requests counts the inplace process's requests to the API server by
// "VERB resource" (GET for one object, LIST for a collection, WATCH), and
// the answers by status code.
type requests struct {
	mu     sync.Mutex
	counts map[string]int
	codes  map[string]int
	next   http.RoundTripper
	// only, when set, leaves out requests in other namespaces than these
	// (cluster-scoped ones still count): the process watches every pod of
	// the shared world, and a pod of another test deleted while its
	// upgrade is in flight is rightly looked up on the API server (a
	// cache miss is not taken for "gone" before the server says so).
	only []string
}

func (r *requests) wrap(next http.RoundTripper) http.RoundTripper {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next = next
	return r
}

func (r *requests) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	key := requestKey(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ns := namespaceOf(req); ns != "" && len(r.only) > 0 && !slices.Contains(r.only, ns) {
		return resp, err
	}
	r.counts[key]++
	if err == nil {
		r.codes[fmt.Sprintf("%s %d", key, resp.StatusCode)]++
	}
	return resp, err
}

// reset forgets what was counted (the informers' first lists).
func (r *requests) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts, r.codes = map[string]int{}, map[string]int{}
}

func (r *requests) snapshot() (counts, codes map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts, codes = map[string]int{}, map[string]int{}
	for k, v := range r.counts {
		counts[k] = v
	}
	for k, v := range r.codes {
		codes[k] = v
	}
	return counts, codes
}

// namespaceOf is the namespace in a request's path, or "".
func namespaceOf(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "namespaces" {
			return parts[i+1]
		}
	}
	return ""
}

// requestKey is "GET pods", "LIST pods", "WATCH pods", "PATCH pods/status",
// "POST events", from the request's path:
// /api/v1/namespaces/<ns>/pods/<name>/status, /apis/apps/v1/replicasets, ...
func requestKey(req *http.Request) string {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) > 0 && parts[0] == "apis" && len(parts) > 2 {
		parts = parts[3:]
	} else if len(parts) > 1 {
		parts = parts[2:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return req.Method + " namespaces"
	}
	resource, named := parts[0], len(parts) > 1
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	verb := req.Method
	switch {
	case verb == http.MethodGet && req.URL.Query().Get("watch") == "true":
		verb = "WATCH"
	case verb == http.MethodGet && !named:
		verb = "LIST"
	}
	return verb + " " + resource
}

// A Deployment of 8 pods upgraded in place: the process reads pods, owners
// and nodes from its informer caches, so it asks the API server for no pod
// by name and lists none; what it sends per pod is its writes (and Events).
func TestRequestsPerUpgradedPod(t *testing.T) {
	counter := &requests{}
	counter.reset()
	e := newEnvWith(t, func(p *config.Process) { p.WrapTransport = counter.wrap })
	counter.mu.Lock()
	counter.only = []string{e.ns, "inplace-system"} // the test's pods, the project's own (pre-pull pods, config)
	counter.mu.Unlock()
	const n = 8
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: n, image: e.ref("shop", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "50%"}})
	counter.reset()

	digest := e.push("shop", "1.1.0")
	e.waitAllOn("web", n, digest, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
	counts, codes := counter.snapshot()
	t.Logf("requests for %d pods: %s", n, summary(counts))
	t.Logf("answers: %s", summary(codes))

	for _, key := range []string{"GET pods", "GET nodes"} {
		if counts[key] != 0 {
			t.Errorf("%d %q requests; want none: the process reads its cache", counts[key], key)
		}
	}
	// Template sync reads the Deployment and its ReplicaSets live (their
	// fresh status is what its steps wait on, woken by the watch): once
	// per step and per status the controller writes meanwhile, whatever
	// the pod count (before the caches: 3 GETs of each per pod).
	for _, key := range []string{"LIST pods", "GET replicasets", "GET deployments", "LIST replicasets"} {
		if counts[key] > 12 {
			t.Errorf("%d %q requests for %d pods; want a few per rollout, none per pod", counts[key], key, n)
		}
	}
	if got := codes["PATCH pods 422"]; got != 0 {
		t.Errorf("%d pod patches failed their precondition; want none (one decision at a time per pod)", got)
	}
	if got := codes["PATCH pods 200"]; got > 2*n {
		t.Errorf("%d pod patches for %d pods; want at most 2 per pod (the upgrade, its end)", got, n)
	}
}

func summary(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return b.String()
}
