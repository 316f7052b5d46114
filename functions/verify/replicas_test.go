package verify_test

import (
	"sync"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// TestOneDecisionPerPodAcrossReplicas: the deliveries of
// TestOneDecisionPerPod shared between two replicas of verify (two
// Functions, each its own per-pod lock and lease holder on one real
// nats-server): the pod's lease lets one of them at a time read and
// decide; the pod has no gate, so its success is reported (one id) and
// not written to the pod at all.
func TestOneDecisionPerPodAcrossReplicas(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	pc := fntest.Identity(t, w, patchpod.RBAC, ns)
	writes := &fntest.Writes{}
	rc := fntest.IdentityConfig(t, w, verify.RBAC, ns)
	rc.Wrap(writes.Wrap)
	vc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	b := bustest.New(t, nil)
	var replicas []*verify.Function
	for range 2 {
		l, err := b.Leases(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, verify.New(verify.Deps{Client: vc, Guard: fntest.Guard(vc), Leases: l}))
	}
	fx := fixture{w: w, ns: ns, patch: patchpod.New(patchpod.Deps{Client: pc, Guard: fntest.Guard(pc)}), fn: replicas[0]}

	v1, v2 := fntest.Push(t, w, "verify/replicas", "v1"), fntest.Push(t, w, "verify/replicas", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-replicas", v2)
	patched := fx.patched(t, plan)
	fntest.WaitPod(t, w, pod, "Ready on the target", readyOn(v2))
	ins := []cloudevents.Event{patched, fx.podUpdated(t, pod)}

	succeeded := &outcomeIDs{}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(ins))
	for range 2 {
		for _, fn := range replicas {
			for _, in := range ins {
				wg.Go(func() {
					outs, err := fn.Handle(t.Context(), in)
					if err != nil && !fntest.IsNotYet(err) {
						errs <- err
					}
					succeeded.add(outs)
				})
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("delivery: %v", err)
	}
	if got := writes.Status(); len(got) != 0 {
		t.Errorf("pod writes by answer = %v; want none (the pod has no gate: patch-pod's write was the upgrade's one)", got)
	}
	if ids := succeeded.distinct(); len(ids) != 1 || ids[0] != inplace.StepID(plan, events.UpgradeSucceeded) {
		t.Errorf("upgrade.succeeded ids = %v; want the one step id", ids)
	}
	if p := fntest.Get(t, w, pod); inplace.InFlight(p, state(t, p)) {
		t.Errorf("state %+v still in flight on a pod on the target", state(t, p))
	}
}

// A replica of verify whose cache is behind the patch (another replica's
// patch-pod wrote it a moment ago) reads the pod again from the API server
// instead of judging the pod as it was before: there, the state patch-pod
// wrote is missing, which reads as "changed by others" (and with an
// earlier upgrade's state, as "superseded"). The scale run with 3 replicas
// halted on that.
func TestAReplicaBehindThePatchReadsThePodAgain(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	pc := fntest.Identity(t, w, patchpod.RBAC, ns)
	vc := fntest.Identity(t, w, verify.RBAC, ns)
	v1, v2 := fntest.Push(t, w, "verify/stale", "v1"), fntest.Push(t, w, "verify/stale", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, false))
	before := fntest.Get(t, w, pod)
	fx := fixture{w: w, ns: ns, patch: patchpod.New(patchpod.Deps{Client: pc, Guard: fntest.Guard(pc)})}
	patched := fx.patched(t, fntest.Plan(t, pod, "up-stale", v2))
	fn := verify.New(verify.Deps{Client: vc, Guard: fntest.Guard(vc), Reader: &podReader{Reader: kube.Live{Client: vc}, pod: before}})
	outs, err := fn.Handle(t.Context(), patched)
	if err != nil && !fntest.IsNotYet(err) {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Type() == events.UpgradeFailed {
			t.Errorf("verify judged the pod from a cache behind the patch: %s %s", o.Type(), o.Data())
		}
	}
}
