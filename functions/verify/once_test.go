package verify_test

import (
	"sync"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// TestOneDecisionPerPod: pod.patched and pod.updated for one pod, each
// twice, delivered at once (as the bus hands them to the
// workers when the kubelet has restarted the pod): one write closes the
// upgrade (the gate True and the state Succeeded together), no delivery
// races it to a failed precondition (422), and the success is reported
// under one id however many deliveries report it.
func TestOneDecisionPerPod(t *testing.T) {
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
	fx := fixture{w: w, ns: ns,
		patch: patchpod.New(patchpod.Deps{Client: pc, Guard: fntest.Guard(pc)}),
		fn:    verify.New(verify.Deps{Client: vc, Guard: fntest.Guard(vc)})}

	v1, v2 := fntest.Push(t, w, "verify/once", "v1"), fntest.Push(t, w, "verify/once", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, true))
	plan := fntest.Plan(t, pod, "up-once", v2)
	patched := fx.patched(t, plan)
	fntest.WaitPod(t, w, pod, "Ready on the target", readyOn(v2))
	ins := []cloudevents.Event{patched, fx.podUpdated(t, pod)}

	succeeded := &outcomeIDs{}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(ins))
	for range 2 {
		for _, in := range ins {
			wg.Go(func() {
				outs, err := fx.fn.Handle(t.Context(), in)
				if err != nil && !fntest.IsNotYet(err) {
					errs <- err
				}
				succeeded.add(outs)
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("delivery: %v", err)
	}
	if got := writes.Status(); got[200] != 1 || len(got) != 1 {
		t.Errorf("pod writes by answer = %v; want exactly one, 200", got)
	}
	if ids := succeeded.distinct(); len(ids) != 1 || ids[0] != inplace.StepID(plan, events.UpgradeSucceeded) {
		t.Errorf("upgrade.succeeded ids = %v; want the one step id", ids)
	}
	end := fntest.Get(t, w, pod)
	if st := state(t, end); st.Phase != inplace.PhaseSucceeded {
		t.Errorf("state phase = %s, want Succeeded", st.Phase)
	}
	if g, _ := inplace.GateStatus(end); g != corev1.ConditionTrue {
		t.Errorf("gate = %q, want True", g)
	}
}

// outcomeIDs collects the ids of the upgrade.succeeded events deliveries
// return.
type outcomeIDs struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (o *outcomeIDs) add(outs []cloudevents.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range outs {
		if e.Type() == events.UpgradeSucceeded {
			if o.ids == nil {
				o.ids = map[string]bool{}
			}
			o.ids[e.ID()] = true
		}
	}
}

func (o *outcomeIDs) distinct() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for id := range o.ids {
		out = append(out, id)
	}
	return out
}
