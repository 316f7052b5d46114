package verify_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/world"
)

// leases counts the pod leases taken; while held, another replica holds
// every pod.
type leases struct {
	mu    sync.Mutex
	takes int
	held  bool
}

func (l *leases) Take(context.Context, string, string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return nil, bus.ErrHeld
	}
	l.takes++
	return func() {}, nil
}

func (l *leases) set(held bool) (takes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held, takes = held, l.takes
	return takes
}

// podReader serves the pod it is given, as a replica's cache would.
type podReader struct {
	kube.Reader
	mu  sync.Mutex
	pod *corev1.Pod
}

func (r *podReader) Pod(context.Context, string, string) (*corev1.Pod, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pod.DeepCopy(), nil
}

func (r *podReader) set(p *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pod = p
}

// A delivery whose decision is to wait (the kubelet has not restarted the
// container yet) takes no lease, and answers even while another replica
// holds the pod; one whose decision acts (the pod is Ready on the target:
// report the success) waits for the lease and takes it once. The timer
// after the success is confirmed on the stream takes none.
func TestOnlyADecisionThatActsTakesTheLease(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	pc := fntest.Identity(t, w, patchpod.RBAC, ns)
	vc := fntest.Identity(t, w, verify.RBAC, ns)
	v1, v2 := fntest.Push(t, w, "verify/leases", "v1"), fntest.Push(t, w, "verify/leases", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, false))
	before := fntest.Get(t, w, pod)
	fx := fixture{w: w, ns: ns, patch: patchpod.New(patchpod.Deps{Client: pc, Guard: fntest.Guard(pc)})}
	plan := fntest.Plan(t, pod, "up-leases", v2)
	patched := fx.patched(t, plan)
	landed := fntest.WaitPod(t, w, pod, "Ready on the target", readyOn(v2))
	updated := fx.podUpdated(t, pod)

	// The pod as the cache had it just after the patch: the new image in
	// its spec and state, the old container still running.
	restarting := landed.DeepCopy()
	restarting.Status = before.Status
	reader := &podReader{Reader: kube.Live{Client: vc}, pod: restarting}
	l := &leases{}
	fn := verify.New(verify.Deps{Client: vc, Guard: fntest.Guard(vc), Reader: reader, Leases: l})

	for _, held := range []bool{false, true} {
		l.set(held)
		outs, err := fn.Handle(t.Context(), patched)
		if len(outs) != 0 || !fntest.IsNotYet(err) || strings.Contains(err.Error(), bus.ErrHeld.Error()) {
			t.Errorf("timer while the kubelet works (lease held by another: %v) = %d outputs, %v; want its own not yet", held, len(outs), err)
		}
	}
	if takes := l.set(true); takes != 0 {
		t.Errorf("leases taken by decisions to wait = %d; want 0", takes)
	}

	reader.set(landed)
	outs, err := fn.Handle(t.Context(), updated)
	if len(outs) != 0 || !fntest.IsNotYet(err) || !strings.Contains(err.Error(), bus.ErrHeld.Error()) {
		t.Errorf("pod.updated of the landed pod while another replica holds it = %d outputs, %v; want not yet (held)", len(outs), err)
	}
	l.set(false)
	outs, err = fn.Handle(t.Context(), updated)
	if err != nil || len(outs) != 1 || outs[0].Type() != events.UpgradeSucceeded {
		t.Fatalf("pod.updated of the landed pod = %v, %v; want upgrade.succeeded", outs, err)
	}
	if takes := l.set(false); takes != 1 {
		t.Errorf("leases taken = %d; want 1 (the delivery that reported)", takes)
	}

	// The runner confirms the success on the stream; the timer that comes
	// back after it has nothing left to catch: no output, no lease.
	fn.Published(updated, outs)
	outs, err = fn.Handle(t.Context(), patched)
	if err != nil || len(outs) != 0 {
		t.Errorf("timer after the confirmed success = %v, %v; want nothing", outs, err)
	}
	if takes := l.set(false); takes != 1 {
		t.Errorf("leases taken by the timer after the confirmed success = %d; want 0", takes-1)
	}
}
