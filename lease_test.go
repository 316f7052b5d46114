package function

import (
	"context"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/test/world"
)

// TestKnativeReplicasShareEachPodThroughItsLease: in Knative mode the pods
// of patch-pod's and of verify's Service share each pod through a lease in
// NATS, as Start builds the function (app.BuildKnative). While another pod
// of the Service holds a pod's lease (taken here as that replica takes it:
// bus.Leases on the same bucket), this one answers "not yet" for the pod
// and decides nothing; once it is released, the same event is decided.
// Without the wiring the first delivery is decided at once, lease or not.
func TestKnativeReplicasShareEachPodThroughItsLease(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	plan := events.Plan{UpgradeID: "u-lease", Pod: events.PodRef{Namespace: ns, Name: "web-0", UID: "uid-web-0", Node: "node-1"},
		Owner:      events.ObjectRef{Kind: "Deployment", Namespace: ns, Name: "web"},
		Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/web:1", ToImage: "r.example/web:2"}}}
	for _, c := range []struct {
		function, typ string
		data          any
	}{
		{patchpod.Name, events.ImagePrepulled, events.PrepulledData{Plan: plan, Node: plan.Pod.Node}},
		{verify.Name, events.PodPatched, events.PatchedData{Plan: plan, ResourceVersion: "1", PatchedAt: time.Now()}},
	} {
		t.Run(c.function, func(t *testing.T) {
			in, err := events.New("lease-"+c.function, c.typ, events.Source("test"), plan.Pod.String(), c.data)
			if err != nil {
				t.Fatal(err)
			}
			f, other := knativeReplica(t, w, ns, c.function)
			release, err := other.Take(t.Context(), c.function, plan.Pod.UID)
			if err != nil {
				t.Fatal(err)
			}
			if err := handle(t, f, in); err == nil || !strings.Contains(err.Error(), bus.ErrHeld.Error()) {
				t.Fatalf("while another replica holds the pod: %v; want not yet, %q", err, bus.ErrHeld)
			}
			release()
			if err := handle(t, f, in); err != nil && strings.Contains(err.Error(), bus.ErrHeld.Error()) {
				t.Fatalf("after the release: %v; want the event decided", err)
			}
		})
	}
}

// knativeReplica starts function as a Knative Service's pod does (Start,
// from its environment) on a NATS server of its own, and returns it with
// the lease bucket it opened, as another pod of the Service sees it.
func knativeReplica(t *testing.T, w *world.World, ns, function string) (*Function, *bus.Leases) {
	t.Helper()
	srv := bustest.Server(t)
	cfg := map[string]string{
		"INPLACE_KUBECONFIG": w.Cluster.Kubeconfig(), "INPLACE_NAMESPACE": ns, "INPLACE_FUNCTIONS": function,
		"INPLACE_NATS_URL": srv.URL(), "INPLACE_REPLICAS": "1",
	}
	f := New()
	if err := f.Start(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop(context.Background()) })
	p, err := processFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	leases, err := bus.OpenLeases(t.Context(), nc, p.Bus, true) // only find it: the function opened it
	if err != nil {
		t.Fatalf("the function opened no lease bucket: %v", err)
	}
	return f, leases
}

// handle runs in through f as func-go does, logging the answer.
func handle(t *testing.T, f *Function, in cloudevents.Event) error {
	t.Helper()
	_, err := f.Handle(t.Context(), in)
	t.Logf("%s: %v", in.Type(), err)
	return err
}
