package templatesync_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/templatesync"
	"github.com/inplace-dev/inplace/test/world"
)

// hold holds the fixture's StatefulSet for r as compute-spec does before
// its first plans, and waits until the controller observed it.
func (f *fixture) hold(r *rollout.Rollout) *appsv1.StatefulSet {
	f.t.Helper()
	ctx := f.t.Context()
	sts, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	s := &templatesync.Syncer{Client: f.c}
	if held, err := s.Hold(ctx, r, sts); err != nil || held == nil {
		f.t.Fatalf("hold: %v, %v; want the StatefulSet held", held, err)
	}
	var out *appsv1.StatefulSet
	err = world.Eventually(ctx, time.Minute, "the hold observed", func(ctx context.Context) (bool, error) {
		out, err = f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
		return err == nil && out.Status.ObservedGeneration >= out.Generation, err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	if again, err := s.Hold(ctx, r, out); err != nil || again != nil {
		f.t.Errorf("holding again wrote %v (%v); want nothing", again, err)
	}
	return out
}

// moveAhead does what patch-pod does to the named pods while the
// StatefulSet is held: the image and the held revision in one write, which
// it must find (inplace.HeldRevision).
func (f *fixture) moveAhead(sts *appsv1.StatefulSet, r *rollout.Rollout, names ...string) string {
	f.t.Helper()
	ctx := f.t.Context()
	var revision string
	for _, name := range names {
		pod, err := f.c.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			f.t.Fatal(err)
		}
		rev, ok := inplace.HeldRevision(sts, pod, r.UpgradeID)
		if !ok {
			f.t.Fatalf("pod %s: no held revision on %s", name, sts.Annotations[inplace.SyncAnnotation])
		}
		revision = rev
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/uid","value":%q},{"op":"replace","path":"/spec/containers/0/image","value":%q},`+
			`{"op":"add","path":"/metadata/labels/controller-revision-hash","value":%q}]`, pod.UID, f.new, rev)
		if _, err := f.c.CoreV1().Pods(f.ns).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			f.t.Fatal(err)
		}
		r.Pods[name].State = rollout.Succeeded
	}
	return revision
}

// running is a rollout of the fixture to f.new with every pod planned.
func (f *fixture) running() *rollout.Rollout {
	r := &rollout.Rollout{UpgradeID: "u-sync", Phase: rollout.Running, Pods: map[string]*rollout.Pod{},
		Workload: events.ObjectRef{Kind: f.kind, Namespace: f.ns, Name: f.name},
		Push: events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: f.w.Registry.Host(),
			Repository: f.ns + "/shop", Tag: "1.1.0", Origin: "test"}}}
	for name, uid := range f.uids {
		r.Pods[name] = &rollout.Pod{Name: name, UID: string(uid), State: rollout.InFlight, UpgradeID: r.UpgradeID,
			Containers: []events.ContainerPlan{{Name: "app", FromImage: f.old, ToImage: f.new}}}
	}
	return r
}

// A StatefulSet held from the first plan: the pods moved with the revision
// in their image write are left alone by the real controller (below the
// partition), the revision recorded ahead is the one the controller makes
// for the synced template, so the sync relabels no pod, and the strategy
// from before the hold comes back.
func TestStatefulSetHeldFromTheFirstPlan(t *testing.T) {
	f, before := newStatefulSet(t)
	ctx := t.Context()
	r := f.running()
	sts := f.hold(r)
	ahead := f.moveAhead(sts, r, "shop-0", "shop-1", "shop-2")
	f.waitOn(f.new)
	f.checkPodsKept()
	labels := f.podRevisions()

	r.Phase = rollout.Syncing
	f.sync(r)
	sts, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sts.Status.UpdateRevision != ahead {
		t.Errorf("held revision %s; the controller made %s", ahead, sts.Status.UpdateRevision)
	}
	if diff := cmp.Diff(labels, f.podRevisions()); diff != "" {
		t.Errorf("the sync relabelled pods (-before +after):\n%s", diff)
	}
	f.checkRecord(sts.ObjectMeta, sts.Spec.Template.Spec)
	if diff := cmp.Diff(before.Spec.UpdateStrategy, sts.Spec.UpdateStrategy); diff != "" {
		t.Errorf("update strategy not restored (-before +after):\n%s", diff)
	}
	f.promoted(3)
	f.checkPodsKept()
}

// A hold the sync does not take over (here: a pod is not on the target, so
// the template is left as is) is released: the pods labelled ahead get the
// current revision back first, so the real controller, once it may, counts
// every pod current and replaces none; the strategy is unchanged.
func TestStatefulSetHoldReleasedWithoutASync(t *testing.T) {
	f, before := newStatefulSet(t)
	ctx := t.Context()
	r := f.running()
	sts := f.hold(r)
	f.moveAhead(sts, r, "shop-2")
	r.Phase = rollout.Syncing
	var p rollout.Sync
	var done bool
	err := world.Eventually(ctx, time.Minute, "the sync ended, the hold released", func(ctx context.Context) (bool, error) {
		var err error
		p, done, err = (&templatesync.Syncer{Client: f.c}).Sync(ctx, r)
		if k, _ := settle.Classify(err); k == settle.Later {
			return false, nil // the controller has yet to count the pod labelled back
		}
		return true, err
	})
	if err != nil || !done || p.Result != events.TemplateNotSynced || p.Reason != templatesync.ReasonPodsNotOnTarget {
		t.Fatalf("sync: %+v, done %v, %v; want not synced, %s", p, done, err, templatesync.ReasonPodsNotOnTarget)
	}
	sts, err = f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Spec.UpdateStrategy, sts.Spec.UpdateStrategy); diff != "" || sts.Annotations[inplace.SyncAnnotation] != "" {
		t.Errorf("not released: strategy (-before +after):\n%s record %q", diff, sts.Annotations[inplace.SyncAnnotation])
	}
	for name, rev := range f.podRevisions() {
		if rev != before.Status.CurrentRevision {
			t.Errorf("pod %s: revision %s; want %s back", name, rev, before.Status.CurrentRevision)
		}
	}
	f.promoted(3)
	f.checkPodsKept()
}

// newStatefulSet is a fixture StatefulSet of 3 pods, and the StatefulSet
// as created.
func newStatefulSet(t *testing.T) (*fixture, *appsv1.StatefulSet) {
	f := newFixture(t, "StatefulSet")
	f.create(3)
	before, err := f.c.AppsV1().StatefulSets(f.ns).Get(t.Context(), f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f, before
}

// podRevisions maps each pod to its controller-revision-hash.
func (f *fixture) podRevisions() map[string]string {
	f.t.Helper()
	list, err := f.c.CoreV1().Pods(f.ns).List(f.t.Context(), metav1.ListOptions{LabelSelector: "app=" + f.name})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Name] = p.Labels[inplace.RevisionLabel]
	}
	return out
}

// waitOn waits until every pod runs image, Ready.
func (f *fixture) waitOn(image string) {
	f.t.Helper()
	_, err := world.WaitPods(f.t.Context(), f.c, f.ns, "app="+f.name, 2*time.Minute, "all Ready on "+image, func(pods []corev1.Pod) bool {
		for _, p := range pods {
			if cs := world.ContainerStatus(&p, "app"); !world.PodReady(&p) || cs == nil || cs.Image != image {
				return false
			}
		}
		return len(pods) == len(f.uids)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// promoted waits until the controller, having observed the StatefulSet as
// it is, counts n pods updated on its current revision.
func (f *fixture) promoted(n int32) {
	f.t.Helper()
	err := world.Eventually(f.t.Context(), time.Minute, "every pod counted updated on the current revision", func(ctx context.Context) (bool, error) {
		s, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
		return err == nil && s.Status.ObservedGeneration >= s.Generation && s.Status.UpdatedReplicas == n &&
			s.Status.CurrentRevision == s.Status.UpdateRevision, err
	})
	if err != nil {
		f.t.Error(err)
	}
}
