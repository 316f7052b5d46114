package prepull_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// setup gives a test an app namespace, a pre-pull namespace that enforces
// Pod Security "restricted" (as config/namespace labels it) and the
// function running as its own least-privileged ServiceAccount.
func setup(t *testing.T, edit func(*config.Defaults)) (w *world.World, appNS, pullNS string, f *prepull.Function) {
	w = world.Shared(t)
	appNS, pullNS = w.NewNamespace(t), w.NewNamespace(t)
	restrict(t, w, pullNS)
	client := fntest.Identity(t, w, prepull.RBAC, pullNS)
	return w, appNS, pullNS, newFunction(client, pullNS, edit)
}

func planned(t *testing.T, plan events.Plan) cloudevents.Event {
	return fntest.Event(t, "plan-"+plan.UpgradeID+"-"+plan.Pod.Name, events.UpgradePlanned, plan.UpgradeID, plan.Pod.String(), plan)
}

func TestPrepullPutsImageOnNode(t *testing.T) {
	w, appNS, pullNS, f := setup(t, nil)
	v1 := fntest.Push(t, w, "prepull/app", "v1")
	v2 := fntest.Push(t, w, "prepull/app", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-1", v2)
	if onNode(t, w, pod.Spec.NodeName, v2.ImageID) {
		t.Fatalf("node %s already has %s", pod.Spec.NodeName, v2.ImageID)
	}

	start := time.Now()
	r := fntest.Drive(t, f.Handle, planned(t, plan))
	took := time.Since(start)
	out := fntest.One(t, r, events.ImagePrepulled)
	got := fntest.Data[events.PrepulledData](t, out)
	if got.Skipped != "" || got.Node != pod.Spec.NodeName || r.NotYet == 0 {
		t.Errorf("prepulled = skipped %q node %q after %d not-yets; want a pull on %s", got.Skipped, got.Node, r.NotYet, pod.Spec.NodeName)
	}
	if pulled := time.Duration(got.PullMillis) * time.Millisecond; pulled <= 0 || pulled > took {
		t.Errorf("pulled in %s, but pre-pull ran only %s in all", pulled, took)
	}
	if out.ID() != inplace.StepID(plan, events.ImagePrepulled) || events.UpgradeID(out) != "up-1" {
		t.Errorf("id %s upgradeid %s, want the step id and up-1", out.ID(), events.UpgradeID(out))
	}
	waitNoPrepullPods(t, w, pullNS)
	runsFromTheNode(t, w, appNS, pod.Spec.NodeName, v2.Pinned)
	if after := fntest.Get(t, w, pod); after.ResourceVersion != pod.ResourceVersion {
		t.Errorf("the planned pod changed (resourceVersion %s → %s); pre-pull must not touch it", pod.ResourceVersion, after.ResourceVersion)
	}

	// The same plan again: the image is there now. The node says so once
	// its kubelet lists it, which it never does while it holds 50 larger
	// images (nodeStatusMaxImages; the shared world's nodes under -count);
	// until then pre-pull remembers its pull.
	r = fntest.Drive(t, f.Handle, planned(t, plan))
	again := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled))
	if (again.Skipped != prepull.SkipPresent && again.Skipped != prepull.SkipPulled) || r.NotYet != 0 {
		t.Errorf("second pre-pull skipped = %q after %d not-yets, want %q or %q at once",
			again.Skipped, r.NotYet, prepull.SkipPresent, prepull.SkipPulled)
	}
	if n := prepullPods(t, w, pullNS); n != 0 {
		t.Errorf("%d pre-pull pods exist after the second plan, want none", n)
	}
}

// runsFromTheNode fails unless a pod of image with imagePullPolicy Never
// runs on node: its kubelet starts one only from an image it holds, and
// refuses it (ErrImageNeverPull) otherwise.
func runsFromTheNode(t *testing.T, w *world.World, ns, node, image string) {
	t.Helper()
	p := fntest.Pod(ns, "never-pulls", image, false)
	p.Spec.NodeName = node
	p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	if _, err := w.Client().CoreV1().Pods(ns).Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	got := fntest.WaitPod(t, w, p, "Ready, or refused", func(p *corev1.Pod) bool {
		cs := fntest.ContainerStatus(p)
		return world.PodReady(p) || cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "ErrImageNeverPull"
	})
	if !world.PodReady(got) {
		t.Errorf("node %s does not hold %s: %+v", node, image, fntest.ContainerStatus(got).State)
	}
}

// skipsRuns counts TestPrepullSkips' runs in this process (-count).
var skipsRuns atomic.Int64

func TestPrepullSkips(t *testing.T) {
	w, appNS, pullNS, f := setup(t, nil)
	v1 := fntest.Push(t, w, "prepull/skip", "v1")
	// The kubelet lists only a node's 50 largest images
	// (nodeStatusMaxImages), and the shared world's nodes hold more under
	// -count: v2 is larger than any other image this package pushes (30 MiB
	// at most) and than the v2 of each earlier run, so its node lists it.
	v2 := fntest.Push(t, w, "prepull/skip", "v2", registry.WithSize(31<<20+skipsRuns.Add(1)<<10))
	node := w.NodeNames()[1]
	// Pinned: the node may hold an older push of the v2 tag (the shared
	// world under -count), which a tag with IfNotPresent would run.
	onV2 := fntest.Pod(appNS, "already", v2.Pinned, false)
	onV2.Spec.NodeName = node
	already := fntest.RunPod(t, w, onV2)
	target := fntest.Pod(appNS, "app", v1.Ref, false)
	target.Spec.NodeName = node
	pod := fntest.RunPod(t, w, target)
	// The kubelet lists a pulled image in node.status.images only at its
	// next image-cache refresh (up to ~40s on the real kubelet).
	if err := world.Eventually(t.Context(), time.Minute, "node lists v2", func(context.Context) (bool, error) {
		return onNode(t, w, node, v2.ImageID), nil
	}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		pod     *corev1.Pod
		prepull bool
		want    string
	}{
		{"present on the node", pod, true, prepull.SkipPresent},
		{"disabled", pod, false, prepull.SkipDisabled},
		{"the pod already runs it", already, true, prepull.SkipRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := fntest.Plan(t, pod, "up-"+tt.name, v2)
			plan.Pod = events.PodRef{Namespace: tt.pod.Namespace, Name: tt.pod.Name, UID: string(tt.pod.UID), Node: tt.pod.Spec.NodeName}
			plan.Prepull = tt.prepull
			r := fntest.Drive(t, f.Handle, planned(t, plan))
			got := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled))
			if got.Skipped != tt.want || r.NotYet != 0 {
				t.Errorf("skipped = %q after %d not-yets, want %q at once", got.Skipped, r.NotYet, tt.want)
			}
			if n := prepullPods(t, w, pullNS); n != 0 {
				t.Errorf("%d pre-pull pods exist, want none", n)
			}
		})
	}
}

func TestPrepullMissingTagFailsTheUpgrade(t *testing.T) {
	w, appNS, pullNS, f := setup(t, nil)
	v1 := fntest.Push(t, w, "prepull/missing", "v1")
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-missing", fntest.Missing(w, "prepull/missing", "v404"))

	r := fntest.Drive(t, f.Handle, planned(t, plan))
	got := fntest.Data[events.OutcomeData](t, fntest.One(t, r, events.UpgradeFailed))
	if got.Outcome != events.OutcomeFailed || got.Reason != prepull.ReasonPrepullFailed || !strings.Contains(got.Message, "not found") {
		t.Errorf("outcome %s reason %s message %q; want failed, %s, the kubelet's not found", got.Outcome, got.Reason, got.Message, prepull.ReasonPrepullFailed)
	}
	if got.Plan.Pod != plan.Pod || got.Plan.UpgradeID != plan.UpgradeID || got.Plan.Owner != plan.Owner {
		t.Errorf("outcome plan %+v, want the plan's pod, upgrade and owner", got.Plan)
	}
	waitNoPrepullPods(t, w, pullNS)
	after := fntest.Get(t, w, pod)
	if after.ResourceVersion != pod.ResourceVersion || after.Spec.Containers[0].Image != v1.Ref {
		t.Errorf("the planned pod changed; pre-pull must not touch it")
	}
}

// TestPrepullTimeout: a pull slower than prepull-timeout fails the upgrade.
func TestPrepullTimeout(t *testing.T) {
	w, appNS, pullNS, f := setup(t, func(d *config.Defaults) { d.PrepullTimeout = 500 * time.Millisecond })
	v1 := fntest.Push(t, w, "prepull/slow", "v1")
	big := fntest.Push(t, w, "prepull/slow", "v2", registry.WithSizeMB(30))
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	r := fntest.Drive(t, f.Handle, planned(t, fntest.Plan(t, pod, "up-slow", big)))
	got := fntest.Data[events.OutcomeData](t, fntest.One(t, r, events.UpgradeFailed))
	if got.Reason != prepull.ReasonPrepullTimeout {
		t.Errorf("reason = %s (%s), want %s", got.Reason, got.Message, prepull.ReasonPrepullTimeout)
	}
	waitNoPrepullPods(t, w, pullNS)
}

// TestPrepullPerNodeBound: five plans for five images on one node, handled
// at once, never have more than prepull-per-node pre-pull pods on it.
func TestPrepullPerNodeBound(t *testing.T) {
	const perNode, plans = 2, 5
	w, appNS, pullNS, f := setup(t, func(d *config.Defaults) { d.PrepullPerNode = perNode })
	names := w.NodeNames()
	node := names[len(names)-1] // the world's last node: the third of the simulated, the second of the real
	var evs []cloudevents.Event
	for i := range plans {
		repo := "prepull/bound" + string(rune('a'+i))
		v1 := fntest.Push(t, w, repo, "v1")
		v2 := fntest.Push(t, w, repo, "v2", registry.WithSizeMB(2))
		p := fntest.Pod(appNS, "app-"+string(rune('a'+i)), v1.Ref, false)
		p.Spec.NodeName = node
		evs = append(evs, planned(t, fntest.Plan(t, fntest.RunPod(t, w, p), "up-bound", v2)))
	}
	peak := watchPeak(t, w, pullNS)
	var wg sync.WaitGroup
	results := make([]fntest.Result, plans)
	for i, e := range evs {
		wg.Go(func() { results[i] = fntest.Drive(t, f.Handle, e) })
	}
	wg.Wait()
	for i, r := range results {
		if got := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled)); got.Skipped != "" {
			t.Errorf("plan %d skipped: %s", i, got.Skipped)
		}
	}
	waitNoPrepullPods(t, w, pullNS)
	if got := peak(); got > perNode || got < 1 {
		t.Errorf("at most %d pre-pull pods existed on %s at once, want between 1 and %d", got, node, perNode)
	}
}

// TestPrepullRBAC: the role lets it run pods only in the pre-pull namespace.
func TestPrepullRBAC(t *testing.T) {
	w := world.Shared(t)
	appNS, pullNS := w.NewNamespace(t), w.NewNamespace(t)
	client := fntest.Identity(t, w, prepull.RBAC, pullNS)
	ctx := t.Context()
	_, err := client.CoreV1().Pods(appNS).Patch(ctx, "any", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("patch a pod in the app namespace: err = %v, want Forbidden", err)
	}
	_, err = client.CoreV1().Pods(appNS).Create(ctx, fntest.Pod(appNS, "x", "img", false), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("create a pod in the app namespace: err = %v, want Forbidden", err)
	}
	if _, err := client.CoreV1().Pods(pullNS).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list pods in the pre-pull namespace: %v", err)
	}
}

func onNode(t *testing.T, w *world.World, node, imageID string) bool {
	t.Helper()
	n, err := w.Client().CoreV1().Nodes().Get(t.Context(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range n.Status.Images {
		if slices.Contains(img.Names, imageID) {
			return true
		}
	}
	return false
}

func prepullPods(t *testing.T, w *world.World, ns string) int {
	t.Helper()
	l, err := w.Client().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: prepull.Selector})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

func waitNoPrepullPods(t *testing.T, w *world.World, ns string) {
	t.Helper()
	if _, err := world.WaitPods(t.Context(), w.Client(), ns, prepull.Selector, fntest.Timeout, "pre-pull pods gone",
		func(ps []corev1.Pod) bool { return len(ps) == 0 }); err != nil {
		t.Error(err)
	}
}

// watchPeak watches pre-pull pods in ns and returns a func giving the
// most that existed at once.
func watchPeak(t *testing.T, w *world.World, ns string) func() int {
	t.Helper()
	wi, err := w.Client().CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{LabelSelector: prepull.Selector})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	live, peak := map[string]bool{}, 0
	go func() {
		for ev := range wi.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == "DELETED" {
				delete(live, p.Name)
			} else {
				live[p.Name] = true
			}
			peak = max(peak, len(live))
			mu.Unlock()
		}
	}()
	t.Cleanup(wi.Stop)
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// restrict labels ns to enforce Pod Security "restricted".
func restrict(t *testing.T, w *world.World, ns string) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)
	if _, err := w.Client().CoreV1().Namespaces().Patch(t.Context(), ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
