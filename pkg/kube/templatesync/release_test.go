package templatesync_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube/templatesync"
)

// A hold is released only once the StatefulSet controller's status counts
// the pods labelled back: restored while the controller's cache still had a
// pod on the held revision, the controller would replace that pod (CI saw
// TestHaltedStatefulSetIsReleased's db-2 recreated so). Release labels the
// pod back, then waits (a NotYet error) while the status counts 2 of the 3
// pods on the current revision, and restores the strategy once it counts 3.
func TestReleaseWaitsForTheControllerToCountThePodsLabelledBack(t *testing.T) {
	ctx := t.Context()
	const ns, old, next = "shop", "reg.example/db:1.0.0", "reg.example/db:1.0.1"
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", UID: "sts-uid", Generation: 1, ResourceVersion: "1"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: old}}},
			},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3,
			CurrentRevision: "db-1111", UpdateRevision: "db-1111"},
	}
	c := fake.NewClientset(sts)
	r := &rollout.Rollout{UpgradeID: "u-1", Phase: rollout.Halted, Pods: map[string]*rollout.Pod{},
		Workload: events.ObjectRef{Kind: "StatefulSet", Namespace: ns, Name: "db", UID: "sts-uid"}}
	for _, name := range []string{"db-0", "db-1", "db-2"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": "db", inplace.RevisionLabel: "db-1111"}}}
		if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r.Pods[name] = &rollout.Pod{Name: name, UID: string(pod.UID), State: rollout.Pending, UpgradeID: r.UpgradeID,
			Containers: []events.ContainerPlan{{Name: "app", FromImage: old, ToImage: next}}}
	}
	s := &templatesync.Syncer{Client: c}
	held, err := s.Hold(ctx, r, sts)
	if err != nil || held == nil {
		t.Fatalf("hold: %v, %v", held, err)
	}
	rec, err := inplace.ParseSyncRecord(held.ObjectMeta)
	if err != nil || rec == nil || !rec.Hold {
		t.Fatalf("hold record %+v, %v", rec, err)
	}
	// db-2 moved with the held revision in its image write, then was rolled
	// back; the controller counts it on no revision it knows.
	pod, err := c.CoreV1().Pods(ns).Get(ctx, "db-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels[inplace.RevisionLabel] = rec.Revision
	if _, err := c.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	setCounted := func(n int32) {
		t.Helper()
		cur, err := c.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Status.CurrentReplicas, cur.Status.UpdatedReplicas = n, n
		if _, err := c.AppsV1().StatefulSets(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stillHeld := func(when string) {
		t.Helper()
		cur, err := c.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cur.Annotations[inplace.SyncAnnotation] == "" || cur.Spec.UpdateStrategy.RollingUpdate == nil {
			t.Fatalf("%s: released (strategy %+v); want it held until the controller counts every pod", when, cur.Spec.UpdateStrategy)
		}
	}
	setCounted(2)

	err = s.Release(ctx, r)
	if kind, _ := settle.Classify(err); kind != settle.Later {
		t.Fatalf("release with db-2 ahead: %v (%s); want not yet", err, kind)
	}
	stillHeld("after the relabel")
	if got := revisionOf(ctx, t, c, ns, "db-2"); got != "db-1111" {
		t.Fatalf("db-2 on %s; want labelled back with db-1111", got)
	}
	err = s.Release(ctx, r)
	if kind, _ := settle.Classify(err); kind != settle.Later {
		t.Fatalf("release while the controller counts 2 of 3: %v (%s); want not yet", err, kind)
	}
	stillHeld("while the controller counts 2 of 3")

	setCounted(3)
	if err := s.Release(ctx, r); err != nil {
		t.Fatalf("release once counted: %v", err)
	}
	cur, err := c.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Annotations[inplace.SyncAnnotation] != "" || cur.Spec.UpdateStrategy.RollingUpdate != nil && cur.Spec.UpdateStrategy.RollingUpdate.Partition != nil {
		t.Errorf("not released: record %q, strategy %+v", cur.Annotations[inplace.SyncAnnotation], cur.Spec.UpdateStrategy)
	}
}

func revisionOf(ctx context.Context, t *testing.T, c *fake.Clientset, ns, name string) string {
	t.Helper()
	pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod.Labels[inplace.RevisionLabel]
}
