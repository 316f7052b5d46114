package templatesync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube/templatesync"
	"github.com/inplace-dev/inplace/test/world"
)

func TestDeploymentFollowsWithoutARollout(t *testing.T) {
	f := newFixture(t, "Deployment")
	f.create(3)
	ctx := t.Context()
	before, err := f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rsBefore := f.replicaSets()
	r := f.inPlace()
	sw := f.watchStatus()
	f.sync(r)

	d, err := f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.checkRecord(d.ObjectMeta, d.Spec.Template.Spec)
	if d.Spec.Paused {
		t.Error("the Deployment was left paused")
	}
	if got, want := d.Annotations["deployment.kubernetes.io/revision"], before.Annotations["deployment.kubernetes.io/revision"]; got != want {
		t.Errorf("revision %s; was %s (a rollout happened)", got, want)
	}
	f.settled()
	f.checkStatusWatch(sw, false)
	f.checkPodsKept()
	if diff := cmp.Diff(rsBefore, f.replicaSets()); diff != "" {
		t.Errorf("ReplicaSets changed (-before +after):\n%s", diff)
	}
	if d.Status.UpdatedReplicas != 3 {
		t.Errorf("updated replicas %d; want 3", d.Status.UpdatedReplicas)
	}

	// The next pods the controller makes run the new image.
	scale := []byte(`{"spec":{"replicas":5}}`)
	if _, err := f.c.AppsV1().Deployments(f.ns).Patch(ctx, f.name, types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, err := world.WaitPods(ctx, f.c, f.ns, "app="+f.name, 2*time.Minute, "5 Ready", world.AllReady(5))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if img := p.Spec.Containers[0].Image; img != f.new {
			t.Errorf("pod %s runs %s after scaling up; want %s", p.Name, img, f.new)
		}
	}
	if diff := cmp.Diff(rsBefore, f.replicaSets()); diff != "" {
		t.Errorf("scaling up made a new ReplicaSet (-before +after):\n%s", diff)
	}
}

// replicaSets names the workload's ReplicaSets.
func (f *fixture) replicaSets() []string {
	f.t.Helper()
	list, err := f.c.AppsV1().ReplicaSets(f.ns).List(f.t.Context(), metav1.ListOptions{LabelSelector: "app=" + f.name})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, rs := range list.Items {
		out = append(out, rs.Name)
	}
	return out
}

func TestStatefulSetFollowsWithoutARollout(t *testing.T) {
	f := newFixture(t, "StatefulSet")
	f.create(3)
	ctx := t.Context()
	before, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := f.inPlace()
	sw := f.watchStatus()
	steps := f.sync(r)
	t.Logf("steps: %v", steps)
	sts, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.checkRecord(sts.ObjectMeta, sts.Spec.Template.Spec)
	if diff := cmp.Diff(before.Spec.UpdateStrategy, sts.Spec.UpdateStrategy); diff != "" {
		t.Errorf("update strategy not restored (-before +after):\n%s", diff)
	}
	if sts.Status.UpdateRevision == before.Status.UpdateRevision {
		t.Error("no new revision: the template did not change")
	}
	if r.Sync == nil || r.Sync.Revision != sts.Status.UpdateRevision {
		t.Errorf("the pods were relabelled ahead to %+v; the controller made %s", r.Sync, sts.Status.UpdateRevision)
	}
	f.settled()
	f.checkStatusWatch(sw, false)
	for _, p := range f.checkPodsKept() {
		if got := p.Labels["controller-revision-hash"]; got != sts.Status.UpdateRevision {
			t.Errorf("pod %s revision %s; want %s", p.Name, got, sts.Status.UpdateRevision)
		}
	}
	err = world.Eventually(ctx, time.Minute, "current revision promoted", func(ctx context.Context) (bool, error) {
		s, err := f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
		return err == nil && s.Status.UpdatedReplicas == 3 && s.Status.CurrentRevision == s.Status.UpdateRevision, err
	})
	if err != nil {
		t.Error(err)
	}
	f.checkPodsKept()
}

func TestDaemonSetFollowsWithoutARollout(t *testing.T) {
	f := newFixture(t, "DaemonSet")
	f.create(0)
	ctx := t.Context()
	before, err := f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := f.inPlace()
	sw := f.watchStatus()
	f.sync(r)
	ds, err := f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.checkRecord(ds.ObjectMeta, ds.Spec.Template.Spec)
	if diff := cmp.Diff(before.Spec.UpdateStrategy, ds.Spec.UpdateStrategy); diff != "" {
		t.Errorf("update strategy not restored (-before +after):\n%s", diff)
	}
	f.settled()
	f.checkStatusWatch(sw, true)
	if got := sw.strategies(); len(got) != 1 || !got["RollingUpdate"] {
		t.Errorf("update strategies during the sync: %v; want RollingUpdate throughout", got)
	}
	// settled is the controller's decision: it has observed the synced
	// template (observedGeneration) and counts every pod updated, so it has
	// no pod left to replace.
	f.checkPodsKept()
	ds, _ = f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if ds.Status.UpdatedNumberScheduled != ds.Status.DesiredNumberScheduled {
		t.Errorf("updated %d of %d", ds.Status.UpdatedNumberScheduled, ds.Status.DesiredNumberScheduled)
	}
}

// A Deployment in the middle of a rollout of its own (two active
// ReplicaSets) is left alone, and the reason is recorded, not hidden.
func TestDeploymentMidRolloutIsLeftAlone(t *testing.T) {
	f := newFixture(t, "Deployment")
	f.create(3)
	ctx := t.Context()
	// A rollout that cannot finish: the new pods' image does not exist.
	broken := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"` + f.old + `-missing"}]}}}}`)
	if _, err := f.c.AppsV1().Deployments(f.ns).Patch(ctx, f.name, types.StrategicMergePatchType, broken, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err := world.Eventually(ctx, time.Minute, "two active ReplicaSets", func(ctx context.Context) (bool, error) {
		list, err := f.c.AppsV1().ReplicaSets(f.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + f.name})
		active := 0
		for _, rs := range list.Items {
			if rs.Spec.Replicas != nil && *rs.Spec.Replicas > 0 {
				active++
			}
		}
		return err == nil && active == 2, err
	})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	r := &rollout.Rollout{UpgradeID: "u-busy", Phase: rollout.Syncing, Workload: events.ObjectRef{Kind: "Deployment", Namespace: f.ns, Name: f.name},
		Push: events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: f.w.Registry.Host(), Repository: f.ns + "/shop",
			Tag: "1.1.0", Origin: "test"}}}
	rec := record.NewFakeRecorder(10)
	p, done, err := (&templatesync.Syncer{Client: f.c, Recorder: rec}).Sync(ctx, r)
	if err != nil || !done || !strings.Contains(p.Note, "2 active ReplicaSets") {
		t.Fatalf("sync: done %v err %v note %q", done, err, p.Note)
	}
	if p.Result != events.TemplateNotSynced || p.Reason != templatesync.ReasonRolloutUnderWay {
		t.Errorf("result %q reason %q; want NotSynced RolloutUnderWay (the template was not synced)", p.Result, p.Reason)
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Warning "+templatesync.EventNotSynced) {
		t.Errorf("event %q; want a Warning %s on the workload", ev, templatesync.EventNotSynced)
	}
	after, _ := f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	if after.Spec.Paused || after.Annotations[inplace.SyncAnnotation] != "" ||
		after.Spec.Template.Spec.Containers[0].Image != before.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("the Deployment was touched: paused %v template %s", after.Spec.Paused, after.Spec.Template.Spec.Containers[0].Image)
	}
}

// The template reference style is a choice: pods pinned to tag@digest, the
// template gets the same (the default) or the tag alone
// (inplace.dev/template-reference: tag), as a manifest in Git says it.
func TestTemplateReferenceIsAChoice(t *testing.T) {
	for _, style := range []string{"", "tag"} {
		t.Run("style "+style, func(t *testing.T) {
			f := newFixture(t, "Deployment")
			f.create(2)
			r := f.inPlaceTo(f.pinned)
			r.Options.TemplateReference = style
			f.sync(r)
			d, err := f.c.AppsV1().Deployments(f.ns).Get(t.Context(), f.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := f.pinned
			if style == "tag" {
				want = f.new
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != want {
				t.Errorf("template image %s; want %s", got, want)
			}
			f.settled()
			f.checkPodsKept()
		})
	}
}
