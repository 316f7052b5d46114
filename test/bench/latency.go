package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/test/world"
)

// latency is how soon the project acts on a webhook.
type latency struct {
	Samples    int       `json:"samples"`
	P50ms      float64   `json:"p50ms"`
	P99ms      float64   `json:"p99ms"`
	Millis     []float64 `json:"ms"`
	Definition string    `json:"definition"`
	Phases     []phase   `json:"phases,omitempty"`
	Error      string    `json:"error,omitempty"`
}

const latencyDefinition = "the registry's webhook reaching the receiver (a proxy's clock) → the API server receiving " +
	"the project's first patch of the pod (the audit log's requestReceivedTimestamp); one Deployment of one pod per sample, " +
	"its own repository, inplace.dev/prepull false, no gate, one push at a time"

// latencyRun pushes a new version to n one-pod Deployments, one after the
// other, and reads from the audit log when each first patch arrived.
func (p *part) latencyRun(ctx context.Context, n int) latency {
	res := latency{Definition: latencyDefinition}
	hooks, from, err := p.latencyPushes(ctx, n)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	reqs, err := p.requests(ctx, from, time.Now())
	if err != nil {
		res.Error = err.Error()
		return res
	}
	stamps, err := p.out.stamps(ctx, "", "", from)
	if err != nil {
		res.Error = err.Error()
	}
	var steps [3][]time.Duration
	for i, hook := range hooks {
		first, ok := firstPatch(reqs, "latency", latencyName(i)+"-", hook)
		if !ok {
			continue
		}
		res.Millis = append(res.Millis, float64(first.Sub(hook).Microseconds())/1000)
		if st, ok := stampsOf(stamps, "latency/"+latencyName(i)+"-"); ok && !st.Prepulled.IsZero() {
			for j, d := range []time.Duration{st.Planned.Sub(hook), st.Prepulled.Sub(st.Planned), first.Sub(st.Prepulled)} {
				steps[j] = append(steps[j], d)
			}
		}
	}
	if len(steps[0]) > 0 {
		res.Phases = []phase{spread("webhook → upgrade.planned stored", steps[0]),
			spread("planned → image.prepulled stored (pre-pull off: skipped)", steps[1]),
			spread("prepulled → the first patch reaches the API server", steps[2])}
	}
	res.Samples = len(res.Millis)
	if res.Samples < n {
		res.Error = fmt.Sprintf("%d of %d pushes had no patch in the audit log", n-res.Samples, n)
	}
	res.P50ms, res.P99ms = percentile(res.Millis, 50), percentile(res.Millis, 99)
	return res
}

func latencyName(i int) string { return fmt.Sprintf("l%02d", i) }

// latencyPushes creates the Deployments, then pushes to each in turn and
// waits for its pod's spec to name the new digest; it returns when each
// webhook arrived.
func (p *part) latencyPushes(ctx context.Context, n int) ([]time.Time, time.Time, error) {
	const ns = "latency"
	if err := p.namespace(ctx, ns); err != nil {
		return nil, time.Time{}, err
	}
	reg := p.w.Registry
	for i := range n {
		repo := ns + "/" + latencyName(i)
		if _, err := reg.Copy(ctx, baseRepo, versions[0], repo, versions[0]); err != nil {
			return nil, time.Time{}, err
		}
		wl := workload{Kind: "Deployment", Namespace: ns, Name: latencyName(i), Image: imageRef(reg, repo, versions[0], ""), Replicas: 1,
			Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/prepull": "false"}}
		if err := wl.create(ctx, p.client); err != nil {
			return nil, time.Time{}, err
		}
	}
	w, err := watchPods(ctx, p.client, ns)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer w.stop()
	if err := w.until(ctx, 5*time.Minute, "the latency pods Ready", readyCount(n)); err != nil {
		return nil, time.Time{}, err
	}
	from := time.Now()
	var hooks []time.Time
	for i := range n {
		repo := ns + "/" + latencyName(i)
		digest, err := reg.Copy(ctx, baseRepo, versions[1], repo, versions[1])
		if err != nil {
			return nil, from, err
		}
		hook, err := p.proxy.arrival(ctx, repo, versions[1])
		if err != nil {
			return nil, from, err
		}
		hooks = append(hooks, hook)
		if err := w.until(ctx, 2*time.Minute, "the patch of "+latencyName(i), specOn(latencyName(i), digest)); err != nil {
			return nil, from, err
		}
	}
	return hooks, from, nil
}

// readyCount: n pods, all Ready.
func readyCount(n int) func([]*corev1.Pod) bool {
	return func(pods []*corev1.Pod) bool {
		ready := 0
		for _, p := range pods {
			if p.DeletionTimestamp == nil && world.PodReady(p) {
				ready++
			}
		}
		return ready == n
	}
}

// specOn: the app's pod names digest in its spec.
func specOn(app, digest string) func([]*corev1.Pod) bool {
	return func(pods []*corev1.Pod) bool {
		for _, p := range pods {
			if p.Labels["app"] == app && strings.HasSuffix(p.Spec.Containers[0].Image, digest) {
				return true
			}
		}
		return false
	}
}

// stampsOf finds the stamps of the pod whose key starts with prefix.
func stampsOf(stamps map[string]podStamps, prefix string) (podStamps, bool) {
	for k, st := range stamps {
		if strings.HasPrefix(k, prefix) {
			return st, true
		}
	}
	return podStamps{}, false
}

// firstPatch is when the API server received the project's first patch of
// a pod in ns whose name starts with prefix, at or after since.
func firstPatch(reqs []request, ns, prefix string, since time.Time) (time.Time, bool) {
	var first time.Time
	for _, r := range reqs {
		if r.Verb != "patch" || r.Resource != "pods" || r.Subresource != "" || r.Namespace != ns ||
			!strings.HasPrefix(r.Name, prefix) || actorOf(r) != actorProject || r.Received.Before(since) {
			continue
		}
		first = earliest(first, r.Received)
	}
	return first, !first.IsZero()
}

// percentile is the nearest-rank percentile q of xs (0 when empty).
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*q/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
