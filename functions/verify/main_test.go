package verify_test

import (
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/world"
)

// Pulls cost 100ms per MiB here, so a test can make a pull outlast the
// verify deadline with the image's size.
func TestMain(m *testing.M) {
	t := kubelet.FastTimings()
	t.PullPerMB = 100 * time.Millisecond
	world.Main(m, world.Options{KubeletOptions: kubelet.Options{Timings: &t}})
}

// fixture is a namespace with patch-pod and verify, each running as its
// own least-privileged ServiceAccount.
type fixture struct {
	w     *world.World
	ns    string
	patch *patchpod.Function
	fn    *verify.Function
	// deps are fn's, for a test that needs other bounds.
	deps verify.Deps
}

func setup(t *testing.T) fixture {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	pc := fntest.Identity(t, w, patchpod.RBAC, ns)
	vc := fntest.Identity(t, w, verify.RBAC, ns)
	deps := verify.Deps{Client: vc, Guard: fntest.Guard(vc), Recorder: fntest.Recorder(t, vc, verify.Name),
		Recheck: 200 * time.Millisecond, MinReady: 2 * time.Second}
	return fixture{w: w, ns: ns,
		patch: patchpod.New(patchpod.Deps{Client: pc, Guard: fntest.Guard(pc), Recorder: fntest.Recorder(t, pc, patchpod.Name)}),
		fn:    verify.New(deps), deps: deps,
	}
}

// patched runs patch-pod on plan and returns its pod.patched.
func (fx fixture) patched(t *testing.T, plan events.Plan) cloudevents.Event {
	t.Helper()
	in := fntest.Event(t, "prepulled-"+plan.UpgradeID, events.ImagePrepulled, plan.UpgradeID, plan.Pod.String(),
		events.PrepulledData{Plan: plan, Node: plan.Pod.Node, Skipped: "test"})
	return fntest.One(t, fntest.Drive(t, fx.patch.Handle, in), events.PodPatched)
}

// podUpdated is the pod watcher's event for the pod as it is now.
func (fx fixture) podUpdated(t *testing.T, pod *corev1.Pod) cloudevents.Event {
	t.Helper()
	p := fntest.Get(t, fx.w, pod)
	return fntest.Event(t, events.PodStateKey(p), events.PodUpdated, "", p.Namespace+"/"+p.Name, events.PodUpdatedData{Pod: *p})
}
