package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// podsOf is a PodReader over pods by name (the API server, for Fresh).
type podsOf map[string]*corev1.Pod

func (p podsOf) Pod(_ context.Context, _, name string) (*corev1.Pod, error) {
	if pod := p[name]; pod != nil {
		return pod, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

// An outcome is recorded only when its pod bears it out (inplace.AccountOf
// on the plan the record holds); one the pod contradicts is refused for
// good (dead-lettered) with a Warning Event naming the contradiction, and
// the record is left as it was: the pod stays in flight.
func TestOutcomesAreConfirmedByThePod(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		reason  string
		pod     func(c *fakeCluster, a events.Plan)
		fresh   func(c *fakeCluster, a events.Plan) podsOf
		want    rollout.PodState
		refusal string
	}{
		{name: "a success for a pod not patched", typ: events.UpgradeSucceeded, want: rollout.InFlight,
			refusal: "the pod shows the upgrade not patched: the pod has no inplace.dev/state"},
		{name: "a success for a pod still restarting", typ: events.UpgradeSucceeded, want: rollout.InFlight,
			pod: func(c *fakeCluster, a events.Plan) { c.patched(a) }, refusal: "the pod shows the upgrade still under way"},
		{name: "a success the state shows", typ: events.UpgradeSucceeded, want: rollout.Succeeded, pod: func(c *fakeCluster, a events.Plan) {
			c.patched(a)
			c.running(a)
			c.setPhase(a, inplace.PhaseSucceeded)
		}},
		{name: "a success no gate has to show", typ: events.UpgradeSucceeded, want: rollout.Succeeded,
			pod: func(c *fakeCluster, a events.Plan) { c.patched(a); c.running(a) }},
		{name: "a success the cache is behind on", typ: events.UpgradeSucceeded, want: rollout.Succeeded,
			fresh: func(c *fakeCluster, a events.Plan) podsOf {
				cached := c.pods[a.Pod.Name].DeepCopy() // not patched yet
				c.patched(a)
				c.running(a)
				live := c.pods[a.Pod.Name]
				c.pods[a.Pod.Name] = cached
				return podsOf{a.Pod.Name: live}
			}},
		{name: "a success of a pod gone", typ: events.UpgradeSucceeded, want: rollout.InFlight,
			pod: func(c *fakeCluster, a events.Plan) { delete(c.pods, a.Pod.Name) }, refusal: "the pod shows the upgrade gone"},
		{name: "a failure before the patch", typ: events.UpgradeFailed, reason: "NotDrained", want: rollout.Failed},
		{name: "a failure of a pod whose upgrade succeeded", typ: events.UpgradeFailed, reason: "CrashLoopBackOff", want: rollout.InFlight,
			pod: func(c *fakeCluster, a events.Plan) {
				c.patched(a)
				c.running(a)
				c.setPhase(a, inplace.PhaseSucceeded)
			}, refusal: "the pod shows the upgrade ended Succeeded"},
		{name: "a rollback that did not happen", typ: events.UpgradeRolledBack, reason: "CrashLoopBackOff", want: rollout.InFlight,
			pod: func(c *fakeCluster, a events.Plan) { c.patched(a) }, refusal: "the pod shows the upgrade still under way"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newWatched(t, 2, planner.Watchdog{})
			rec := record.NewFakeRecorder(10)
			d := controller.Deps{Cache: x.c, Store: x.store, Recorder: rec,
				Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return x.now }}
			x.fn, x.ro = controllertest.NewChain(d)
			a := only(t, x.push())
			if tt.pod != nil {
				tt.pod(x.c, a)
			}
			if tt.fresh != nil {
				d.Fresh = tt.fresh(x.c, a)
				x.fn, x.ro = controllertest.NewChain(d)
			}
			in, err := events.New("outcome-1", tt.typ, events.Source("verify"), a.Pod.String(), events.OutcomeData{Plan: a,
				Outcome: map[string]string{events.UpgradeSucceeded: events.OutcomeSucceeded, events.UpgradeFailed: events.OutcomeFailed,
					events.UpgradeRolledBack: events.OutcomeRolledBack}[tt.typ], Reason: tt.reason})
			if err != nil {
				t.Fatal(err)
			}
			_, err = x.fn.Handle(t.Context(), in)
			if p := x.rollout().Pods[a.Pod.Name]; p == nil || p.State != tt.want {
				t.Errorf("pod %+v in the record; want it %s", p, tt.want)
			}
			if tt.refusal == "" {
				if err != nil {
					t.Errorf("Handle: %v", err)
				}
				return
			}
			if k, _ := settle.Classify(err); k != settle.Fail || !strings.Contains(err.Error(), tt.refusal) {
				t.Fatalf("Handle: %v (%s); want refused for good: %q", err, k, tt.refusal)
			}
			if tt.name == "a success of a pod gone" {
				return // no pod to record it on; the fake cluster's workload is no object
			}
			select {
			case ev := <-rec.Events:
				want := "Warning " + controller.EventRefused + " Refused " + events.Short(tt.typ) + " of upgrade " + a.UpgradeID +
					" for pod " + a.Pod.Name + ": " + tt.refusal
				if !strings.HasPrefix(ev, want) {
					t.Errorf("Event %q; want %q…", ev, want)
				}
			default:
				t.Error("no Event")
			}
		})
	}
}

// patched leaves the pod of plan as patch-pod's write does: the target set,
// the state Patched, the container not restarted yet.
func (c *fakeCluster) patched(plan events.Plan) {
	p := c.pods[plan.Pod.Name]
	cs := p.Status.ContainerStatuses[0]
	c.setState(plan.Pod.Name, inplace.State{UpgradeID: plan.UpgradeID, Phase: inplace.PhasePatched, Target: plan.Target,
		Owner: plan.Owner, Containers: []inplace.ContainerState{{Name: "app", PreviousImage: plan.Containers[0].FromImage,
			PreviousImageID: cs.ImageID, PreviousContainerID: cs.ContainerID, PreviousRestartCount: cs.RestartCount,
			TargetImage: plan.Containers[0].ToImage, TargetDigest: plan.Containers[0].ToDigest}}})
	p.Spec.Containers[0].Image = plan.Containers[0].ToImage
}

// running: the kubelet restarted the container on the target, Ready.
func (c *fakeCluster) running(plan events.Plan) {
	p := c.pods[plan.Pod.Name]
	cs := &p.Status.ContainerStatuses[0]
	cs.ImageID, cs.ContainerID, cs.RestartCount = "r.example/shop/web@"+newDigest, "containerd://app-2", cs.RestartCount+1
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
}

// setPhase ends the pod's state with phase, as verify's last write does.
func (c *fakeCluster) setPhase(plan events.Plan, phase inplace.Phase) {
	st, err := inplace.ParseState(c.pods[plan.Pod.Name])
	if err != nil || st == nil {
		panic("no state")
	}
	st.Phase = phase
	c.setState(plan.Pod.Name, *st)
}
