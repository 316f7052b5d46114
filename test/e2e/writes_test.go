package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// The project's writes per upgraded pod, counted on the real control plane
// from the inplace process's own client: one without a readiness gate (the
// guarded image + state patch; success goes on the bus and into the rollout
// record), three with one (gate False, the patch, gate True once the
// kubelet took the patch up; success is not written either), and not one
// write refused (409 conflict, 422 failed test). A
// gated StatefulSet's pods too: the template sync's relabel of
// controller-revision-hash rides in the image write (compute-spec holds the
// StatefulSet from the first plan), and the real controller ends counting
// every pod updated, none replaced, its strategy unchanged.
func TestWritesPerUpgradedPod(t *testing.T) {
	for _, c := range []struct {
		name        string
		gate        bool
		want        int
		statefulSet bool
	}{{"plain", false, 1, false}, {"gated", true, 3, false}, {"gated StatefulSet", true, 3, true}} {
		t.Run(c.name, func(t *testing.T) {
			counter := &requests{}
			counter.reset()
			e := newEnvWith(t, func(p *config.Process) { p.WrapTransport = counter.wrap })
			const n = 6
			e.push("shop", "1.0.0")
			e.deploy(workload{name: "web", replicas: n, image: e.ref("shop", "1.0.0"), gate: c.gate,
				annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "50%",
					"inplace.dev/grace-seconds": "0"}, statefulSet: c.statefulSet})
			before := e.pods("web")
			counter.reset()

			digest := e.push("shop", "1.1.0")
			e.waitAllOn("web", n, digest, 3*time.Minute)
			e.waitEvent(events.RolloutCompleted, "/web", time.Minute)
			counts, codes := counter.snapshot()
			t.Logf("requests for %d pods: %s", n, summary(counts))
			t.Logf("answers: %s", summary(codes))

			writes, failed := 0, []string{}
			for k, v := range codes {
				if !strings.HasPrefix(k, "PATCH pods") && !strings.HasPrefix(k, "PUT pods") {
					continue
				}
				writes += v
				if !strings.HasSuffix(k, " 200") {
					failed = append(failed, fmt.Sprintf("%s×%d", k, v))
				}
			}
			if writes > c.want*n {
				t.Errorf("%d pod writes for %d pods (%.1f per pod); want at most %d per pod", writes, n, float64(writes)/n, c.want)
			}
			if len(failed) > 0 {
				t.Errorf("refused pod writes: %v; want none", failed)
			}
			if c.gate {
				e.checkGatedEnd("web")
			}
			if c.statefulSet {
				e.checkStatefulSetEnd("web", before)
			}
		})
	}
}

// checkGatedEnd: every gated pod of app ends with its gate True and its
// upgrade ended (a success leaves the state Patched, the pod running the
// target and ready: inplace.InFlight says it is over).
func (e *env) checkGatedEnd(app string) {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list.Items {
		st, err := inplace.ParseState(&p)
		gate, _ := inplace.GateStatus(&p)
		if err != nil || st == nil || inplace.InFlight(&p, st) || gate != corev1.ConditionTrue {
			e.t.Errorf("pod %s: state %+v (%v), gate %q; want the upgrade over and True", p.Name, st, err, gate)
		}
	}
}

// checkStatefulSetEnd: the StatefulSet's controller counts every pod
// updated on one revision, which every pod's label names; no pod was
// replaced; the strategy is RollingUpdate without a partition again and
// the sync's record is gone.
func (e *env) checkStatefulSetEnd(app string, before map[string]podInfo) {
	e.t.Helper()
	ctx := e.t.Context()
	err := world.Eventually(ctx, time.Minute, "StatefulSet "+app+" settled on its new revision", func(ctx context.Context) (bool, error) {
		sts, err := e.w.Client().AppsV1().StatefulSets(e.ns).Get(ctx, app, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st := sts.Status
		return st.ObservedGeneration >= sts.Generation && st.UpdatedReplicas == *sts.Spec.Replicas &&
			st.CurrentRevision == st.UpdateRevision, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	sts, err := e.w.Client().AppsV1().StatefulSets(e.ns).Get(ctx, app, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType ||
		(ru != nil && ru.Partition != nil && *ru.Partition != 0) {
		e.t.Errorf("strategy after the rollout: %+v; want RollingUpdate as created", sts.Spec.UpdateStrategy)
	}
	if rec := sts.Annotations[inplace.SyncAnnotation]; rec != "" {
		e.t.Errorf("%s still on the StatefulSet: %s", inplace.SyncAnnotation, rec)
	}
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range list.Items {
		if got := p.Labels[inplace.RevisionLabel]; got != sts.Status.UpdateRevision {
			e.t.Errorf("pod %s: %s=%s; want %s", p.Name, inplace.RevisionLabel, got, sts.Status.UpdateRevision)
		}
		if was, ok := before[p.Name]; !ok || was.UID != p.UID {
			e.t.Errorf("pod %s was replaced (uid %s, before %+v)", p.Name, p.UID, was)
		}
	}
}
