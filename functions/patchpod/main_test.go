package patchpod_test

import (
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// setup gives a test a namespace and patch-pod running as its own
// least-privileged ServiceAccount.
func setup(t *testing.T) (*world.World, string, *patchpod.Function) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	client := fntest.Identity(t, w, patchpod.RBAC, ns)
	f := patchpod.New(patchpod.Deps{Client: client, Guard: fntest.Guard(client), Recorder: fntest.Recorder(t, client, patchpod.Name)})
	return w, ns, f
}

func prepulled(t *testing.T, plan events.Plan) cloudevents.Event {
	t.Helper()
	return fntest.Event(t, "prepulled-"+plan.UpgradeID+"-"+plan.Pod.Name, events.ImagePrepulled, plan.UpgradeID,
		plan.Pod.String(), events.PrepulledData{Plan: plan, Node: plan.Pod.Node})
}
