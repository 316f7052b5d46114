package e2e_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// A StatefulSet's rollout that halts releases its hold once no pod is in
// flight: the pod that moved, labelled ahead in its image write, is rolled
// back and labelled back with the current revision, then the strategy is
// as created, and the real controller replaces none of the pods (it would
// replace one still labelled ahead). A newer push holds it again and
// completes: every pod counted updated on one revision, none replaced.
func TestHaltedStatefulSetIsReleased(t *testing.T) {
	e := newEnv(t)
	e.push("db", "1.0.0")
	e.deploy(workload{name: "db", replicas: 3, image: e.ref("db", "1.0.0"), minReady: 3, gate: true, statefulSet: true,
		annotations: map[string]string{"inplace.dev/policy": "semver:patch", "inplace.dev/max-unavailable": "1"}})
	before := e.pods("db")
	e.push("db", "1.0.1", registry.WithCrash())
	e.checkRolledBack("db", before, 1, "CrashLoopBackOff")

	ctx := t.Context()
	var sts *appsv1.StatefulSet
	err := world.Eventually(ctx, time.Minute, "the halted rollout's StatefulSet released and observed", func(ctx context.Context) (bool, error) {
		var err error
		sts, err = e.w.Client().AppsV1().StatefulSets(e.ns).Get(ctx, "db", metav1.GetOptions{})
		return err == nil && sts.Annotations[inplace.SyncAnnotation] == "" &&
			sts.Status.ObservedGeneration >= sts.Generation && sts.Status.UpdatedReplicas == 3, err
	})
	if err != nil {
		t.Fatalf("%v: strategy %+v, record %q, status %+v", err, sts.Spec.UpdateStrategy, sts.Annotations[inplace.SyncAnnotation], sts.Status)
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition != 0 {
		t.Errorf("strategy after the release: %+v; want as created", sts.Spec.UpdateStrategy)
	}
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if got := p.Labels[inplace.RevisionLabel]; got != sts.Status.CurrentRevision {
			t.Errorf("pod %s: %s=%s; want the current %s", p.Name, inplace.RevisionLabel, got, sts.Status.CurrentRevision)
		}
		if before[p.Name].UID != p.UID {
			t.Errorf("pod %s was replaced after the halt", p.Name)
		}
	}

	digest := e.push("db", "1.0.2")
	e.waitAllOn("db", 3, digest, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/db", time.Minute)
	e.checkStatefulSetEnd("db", before)
}
