package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// moment is one thing that happened to one pod of a real-node rollout,
// stamped when it happened, with the actor that made it happen: the API
// server's audit log (who wrote the pod), the pod's status and its
// EndpointSlice endpoint as a watch sees them, and the kubelet's log.
type moment struct {
	At    time.Time `json:"at"`
	Pod   string    `json:"pod"`
	Actor string    `json:"actor"`
	What  string    `json:"what"`
}

// actorEndpoints is the EndpointSlice controller, as the slices show it.
const actorEndpoints = "endpoints"

// timeline records the moments of the pods of one workload.
type timeline struct {
	ns, app string
	cancel  context.CancelFunc

	mu      sync.Mutex
	moments []moment
	seen    map[string]map[string]string // by pod: what was last seen, by facet
}

// startTimeline watches the pods of app in ns and their EndpointSlices.
func startTimeline(ctx context.Context, c kubernetes.Interface, ns, app string) (*timeline, error) {
	ctx, cancel := context.WithCancel(ctx)
	t := &timeline{ns: ns, app: app, cancel: cancel, seen: map[string]map[string]string{}}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	pods, eps := f.Core().V1().Pods().Informer(), f.Discovery().V1().EndpointSlices().Informer()
	pod := func(o any) {
		if p, ok := o.(*corev1.Pod); ok && p.Labels["app"] == app {
			t.note(p.Name, podFacets(p))
		}
	}
	gone := func(o any) {
		if p, ok := o.(*corev1.Pod); ok && p.Labels["app"] == app {
			t.note(p.Name, map[string]string{"pod": "deleted"})
		}
	}
	slice := func(o any) {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelServiceName] == app {
			for name, state := range endpointStates(s) {
				t.note(name, map[string]string{actorEndpoints: state})
			}
		}
	}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: pod, UpdateFunc: func(_, o any) { pod(o) }, DeleteFunc: gone})
	if err == nil {
		_, err = eps.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: slice, UpdateFunc: func(_, o any) { slice(o) }})
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("timeline of %s/%s: %w", ns, app, err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, eps.HasSynced) {
		cancel()
		return nil, fmt.Errorf("timeline of %s/%s: not synced", ns, app)
	}
	t.mu.Lock()
	t.moments = nil // what was there before the rollout is the baseline
	t.mu.Unlock()
	return t, nil
}

// note records, for each facet of pod that changed since it was last
// seen, a moment now.
func (t *timeline) note(pod string, facets map[string]string) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	last := t.seen[pod]
	if last == nil {
		last = map[string]string{}
		t.seen[pod] = last
	}
	for _, k := range sortedKeys(facets) {
		v := facets[k]
		if last[k] == v {
			continue
		}
		last[k] = v
		actor := actorKubelet
		switch k {
		case actorEndpoints:
			actor = actorEndpoints
		case "gate", "pod":
			actor = "api"
		}
		t.moments = append(t.moments, moment{At: now, Pod: pod, Actor: actor, What: k + " " + v})
	}
}

// stop ends the watch and returns the moments seen, with those of the
// audit log's requests and the kubelets' logs between from and to, in
// order.
func (t *timeline) stop(reqs []request, kubeletLogs []string, from, to time.Time) []moment {
	t.cancel()
	t.mu.Lock()
	out := slices.Clone(t.moments)
	pods := map[string]bool{}
	for p := range t.seen {
		pods[p] = true
	}
	t.mu.Unlock()
	out = append(out, auditMoments(reqs, t.ns, pods)...)
	for _, path := range kubeletLogs {
		out = append(out, kubeletMoments(path, t.ns, pods, from, to)...)
	}
	slices.SortStableFunc(out, func(a, b moment) int { return a.At.Compare(b.At) })
	return out
}

// podFacets are what the timeline follows of a pod: the gate, Ready, the
// generation the kubelet reports it has taken up, each container's
// instance, state and readiness, and its deletion.
func podFacets(p *corev1.Pod) map[string]string {
	f := map[string]string{"pod": "exists"}
	if og := p.Status.ObservedGeneration; og != 0 {
		f["observed generation"] = fmt.Sprintf("%d of %d", og, p.Generation) // the kubelet took a spec change up
	}
	if p.DeletionTimestamp != nil {
		f["pod"] = "terminating"
	}
	for _, c := range p.Status.Conditions {
		switch c.Type {
		case gateType:
			f["gate"] = string(c.Status)
		case corev1.PodReady:
			f["Ready"] = string(c.Status)
		}
	}
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		state := "waiting"
		switch {
		case cs.State.Running != nil:
			state = "running"
		case cs.State.Terminated != nil:
			state = "terminated"
		}
		f["container "+cs.Name] = fmt.Sprintf("%s %s ready=%v restarts=%d", shortID(cs.ContainerID), state, cs.Ready, cs.RestartCount)
	}
	return f
}

// endpointStates are the conditions of each pod's endpoint in s.
func endpointStates(s *discoveryv1.EndpointSlice) map[string]string {
	out := map[string]string{}
	b := func(p *bool) bool { return p != nil && *p }
	for _, e := range s.Endpoints {
		if e.TargetRef == nil {
			continue
		}
		c := e.Conditions
		out[e.TargetRef.Name] = fmt.Sprintf("ready=%v serving=%v terminating=%v", b(c.Ready), b(c.Serving), b(c.Terminating))
	}
	return out
}

// auditMoments are the writes to the pods by anyone but their kubelet
// (whose status writes the watch shows by their content).
func auditMoments(reqs []request, ns string, pods map[string]bool) []moment {
	var out []moment
	for _, r := range reqs {
		if r.Namespace != ns || r.Resource != "pods" || !isWrite(r.Verb) || !pods[r.Name] {
			continue
		}
		a := actorOf(r)
		if a == actorKubelet {
			continue
		}
		what := r.Verb
		if r.Subresource != "" {
			what += " " + r.Subresource
		}
		if r.Code >= 300 {
			what += fmt.Sprintf(" (refused %d)", r.Code)
		}
		out = append(out, moment{At: r.Received, Pod: r.Name, Actor: a, What: what})
	}
	return out
}

func shortID(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return id[:min(len(id), 6)]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// keepTimeline puts a run's shares and one pod's moments in its row, and
// every moment in the -timelines directory when one is named.
func (p *part) keepTimeline(res *rollout, ms []moment) {
	res.Shares = map[string]float64{}
	for k, v := range shares(ms) {
		res.Shares[k] = v.Round(time.Millisecond).Seconds()
	}
	res.Timeline = timelineText(onePod(ms))
	if p.opts.timelines == "" {
		return
	}
	name := filepath.Join(p.opts.timelines, fmt.Sprintf("%s-%s.txt", res.Scenario, strings.ReplaceAll(string(res.Run), " ", "-")))
	text := strings.Join(timelineText(ms), "\n") + "\n"
	err := os.MkdirAll(p.opts.timelines, 0o755)
	if err == nil {
		err = os.WriteFile(name, []byte(text), 0o644)
	}
	if err != nil {
		p.log.Warn("timeline not written", "path", name, "err", err)
	}
}

// kubeletLogs are the real kubelets' logs (none on other nodes).
func (p *part) kubeletLogs() []string {
	if p.w.Real == nil {
		return nil
	}
	var out []string
	for _, n := range p.w.Real.NodeNames() {
		if l := p.w.Real.KubeletLog(n); l != "" {
			out = append(out, l)
		}
	}
	return out
}
