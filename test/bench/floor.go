package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// upgradeFloor moves the prepared workload's pods to 1.1.0 as an ideal
// controller would, with no cost of its own: the scenario's budget at a
// time, each pod's gate False and its image patched back to back, gate
// True as soon as the kubelet has taken the patch up (as verify opens it). What is left is the time the
// kubelet itself needs for the same restarts: the floor under in place.
func (p *part) upgradeFloor(ctx context.Context, r *prepared) (time.Duration, error) {
	image, err := p.pushQuiet(ctx, r.source(), r.repo, versions[1], r.sc.FreshMB)
	if err != nil {
		return 0, err
	}
	var ahead func(first, rest []*corev1.Pod) func() error
	if !r.sc.Cached {
		ahead = func(first, rest []*corev1.Pod) func() error { return p.pullAhead(ctx, r.ns, image, first, rest) }
	}
	return p.floor(ctx, r.ns, r.wl.Name, image, r.sc.MaxUnavailable, r.wl.Gate, ahead)
}

// floor patches the pods of app in ns to image, budget at a time (with the
// gate dance when gate), and returns how long until every pod ran it and
// was Ready. ahead, when set, is called with the first batch and the rest
// as the clock starts, and what it returns is waited for once the clock
// has stopped.
func (p *part) floor(ctx context.Context, ns, app, image string, budget int, gate bool,
	ahead func(first, rest []*corev1.Pod) func() error) (took time.Duration, err error) {
	digest := imageref.DigestOf(image)
	w, err := watchPods(ctx, p.client, ns)
	if err != nil {
		return 0, err
	}
	defer w.stop()
	pods := spreadOverNodes(podsOf(w, app))
	ctx, cancel := context.WithTimeout(ctx, rolloutLimit)
	defer cancel()
	start := time.Now()
	if ahead != nil {
		wait := ahead(pods[:min(budget, len(pods))], pods[min(budget, len(pods)):])
		defer func() { err = errors.Join(err, wait()) }()
	}
	for len(pods) > 0 {
		n := min(budget, len(pods))
		batch := names(pods[:n])
		pods = pods[n:]
		err := parallel(ctx, batch, func(ctx context.Context, name string) error {
			if gate {
				if err := setGate(ctx, p.client, ns, name, corev1.ConditionFalse); err != nil {
					return err
				}
			}
			return patchPodImage(ctx, p.client, ns, name, image)
		})
		if err != nil {
			return time.Since(start), err
		}
		if gate {
			if err := w.until(ctx, rolloutLimit, "the patch taken up", podsAre(batch, takenUp(image, digest))); err != nil {
				return time.Since(start), err
			}
			if err := parallel(ctx, batch, func(ctx context.Context, name string) error {
				return setGate(ctx, p.client, ns, name, corev1.ConditionTrue)
			}); err != nil {
				return time.Since(start), err
			}
		}
		done := containersOn(digest)
		if gate {
			done = func(p *corev1.Pod) bool { return containersOn(digest)(p) && world.PodReady(p) }
		}
		if err := w.until(ctx, rolloutLimit, "Ready on "+digest, podsAre(batch, done)); err != nil {
			return time.Since(start), err
		}
	}
	return time.Since(start), nil
}

// spreadOverNodes orders pods as compute-spec orders a Deployment's: every
// node's first pod (by name) before any node's second, the node's name
// breaking ties, so consecutive batches restart pods on different nodes.
// A real kubelet that has just made a pod Ready relisted moments before,
// and the next pod it restarts waits almost a whole PLEG relist period for
// its patch (rollout.sortPending says why); an ideal controller does not
// make it wait.
func spreadOverNodes(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	rank, seen := map[string]int{}, map[string]int{}
	for _, p := range out {
		rank[p.Name] = seen[p.Spec.NodeName]
		seen[p.Spec.NodeName]++
	}
	slices.SortStableFunc(out, func(a, b *corev1.Pod) int {
		if d := rank[a.Name] - rank[b.Name]; d != 0 {
			return d
		}
		return strings.Compare(a.Spec.NodeName, b.Spec.NodeName)
	})
	return out
}

// pullAhead is how an ideal controller gets an image no node has: it
// patches the first batch at once, so their kubelets pull in their own
// sync (a pull ahead of them would add a sandbox before it and a second
// resolve after it), and starts the pull at once, with a pod like
// pre-pull's, on every node only later batches run on. It returns a wait
// for those pulls (their pods deleted once Running).
func (p *part) pullAhead(ctx context.Context, ns, image string, first, rest []*corev1.Pod) func() error {
	nodes := aheadNodes(first, rest)
	if len(nodes) == 0 {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() { done <- warmNodes(ctx, p.client, ns, image, nodes) }()
	return func() error { return <-done }
}

// aheadNodes are the nodes pods of rest run on and no pod of first does,
// each once, in rest's order.
func aheadNodes(first, rest []*corev1.Pod) []string {
	seen := map[string]bool{}
	for _, pod := range first {
		seen[pod.Spec.NodeName] = true
	}
	var nodes []string
	for _, pod := range rest {
		if n := pod.Spec.NodeName; n != "" && !seen[n] {
			seen[n], nodes = true, append(nodes, n)
		}
	}
	return nodes
}

// takenUp: the kubelet has taken the app container's new image up: it
// reports the pod's generation with that image as observed (it does so in
// the sync that stops the old container), or, where it reports no
// generation, the container runs digest.
func takenUp(image, digest string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		for _, c := range p.Spec.Containers {
			if c.Name == "app" && c.Image != image {
				return false
			}
		}
		if og := p.Status.ObservedGeneration; og != 0 {
			return og >= p.Generation
		}
		cs := world.ContainerStatus(p, "app")
		return cs != nil && cs.RestartCount > 0 && imageref.DigestOf(cs.ImageID) == digest
	}
}

// containersOn: the app container runs digest, started again, and is ready.
func containersOn(digest string) func(*corev1.Pod) bool {
	return func(p *corev1.Pod) bool {
		cs := world.ContainerStatus(p, "app")
		return cs != nil && cs.Ready && cs.RestartCount > 0 && imageref.DigestOf(cs.ImageID) == digest
	}
}

// podsAre: every named pod (by name, as the watch sees it) satisfies ok.
func podsAre(names []string, ok func(*corev1.Pod) bool) func([]*corev1.Pod) bool {
	return func(pods []*corev1.Pod) bool {
		by := map[string]*corev1.Pod{}
		for _, p := range pods {
			by[p.Name] = p
		}
		for _, n := range names {
			if p := by[n]; p == nil || !ok(p) {
				return false
			}
		}
		return true
	}
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// setGate writes the readiness gate's condition through the status
// subresource.
func setGate(ctx context.Context, c kubernetes.Interface, ns, name string, s corev1.ConditionStatus) error {
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q,"lastTransitionTime":%q}]}}`,
		gateType, s, time.Now().UTC().Format(time.RFC3339))
	_, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("gate %s of %s/%s: %w", s, ns, name, err)
	}
	return nil
}

// patchPodImage sets the app container's image of a pod, and in the same
// patch takes away the project's state annotation, as a controller taking
// over would: a pod the project upgraded (the scale run's) is otherwise
// left with a Patched state toward a target it no longer runs, and every
// later `inplace run` (the memory part's) would start by looking at it.
func patchPodImage(ctx context.Context, c kubernetes.Interface, ns, name, image string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}},"spec":{"containers":[{"name":"app","image":%q}]}}`,
		inplace.StateAnnotation, image)
	if _, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch %s/%s: %w", ns, name, err)
	}
	return nil
}

// patchTemplate sets the app container's image in a workload's template.
func patchTemplate(ctx context.Context, c kubernetes.Interface, w workload, image string) error {
	patch := []byte(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image))
	var err error
	switch w.Kind {
	case "StatefulSet":
		_, err = c.AppsV1().StatefulSets(w.Namespace).Patch(ctx, w.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	default:
		_, err = c.AppsV1().Deployments(w.Namespace).Patch(ctx, w.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		return fmt.Errorf("patch the template of %s: %w", w.key(), err)
	}
	return nil
}

// parallel runs fn for each item, 32 at a time, and returns the first
// error.
func parallel(ctx context.Context, items []string, fn func(context.Context, string) error) error {
	sem := make(chan struct{}, 32)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, it); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}
