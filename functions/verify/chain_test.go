package verify_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/client-go/informers"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/bus/runner"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube/watcher"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// TestChainOnTheBus runs pre-pull, patch-pod and verify in the runner on a
// real NATS, each as its own ServiceAccount, with the pod watcher feeding
// verify and opening gates: planned upgrades end in exactly one outcome
// each on the stream, carrying the plan.
func TestChainOnTheBus(t *testing.T) {
	w := world.Shared(t)
	ns, pullNS := w.NewNamespace(t), w.NewNamespace(t)
	b := bustest.New(t, nil)
	runChain(t, w, b, ns, pullNS)

	v1 := fntest.Push(t, w, "chain/app", "v1")
	v2 := fntest.Push(t, w, "chain/app", "v2")
	crash := fntest.Push(t, w, "chain/app", "crash", registry.WithCrash())
	cases := []struct {
		name   string
		target fntest.Image
		typ    string
		reason string
	}{
		{"ok", v2, events.UpgradeSucceeded, inplace.ReasonUpdated},
		{"crash", crash, events.UpgradeRolledBack, "CrashLoopBackOff"},
		{"missing", fntest.Missing(w, "chain/app", "v404"), events.UpgradeFailed, prepull.ReasonPrepullFailed},
	}
	plans := map[string]events.Plan{}
	for _, c := range cases {
		// The gate is opened by the watcher, not by the test.
		p := fntest.Pod(ns, c.name, v1.Ref, true)
		pod := fntest.Create(t, w, p)
		pod = fntest.WaitPod(t, w, pod, "Ready (gate opened by the watcher)", world.PodReady)
		plan := fntest.Plan(t, pod, "up-chain", c.target)
		plan.GraceSeconds = 1
		plans[c.name] = plan
		e := fntest.Event(t, "planned-"+c.name, events.UpgradePlanned, plan.UpgradeID, plan.Pod.String(), plan)
		if err := b.Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	var got map[string]cloudevents.Event
	err := world.Eventually(t.Context(), 2*fntest.Timeout, "an outcome for every pod", func(ctx context.Context) (bool, error) {
		got = outcomes(t, b)
		return len(got) == len(cases), nil
	})
	if err != nil {
		t.Fatalf("%v; got %v", err, keys(got))
	}
	for _, c := range cases {
		e := got[plans[c.name].Pod.UID]
		d := fntest.Data[events.OutcomeData](t, e)
		if e.Type() != c.typ || d.Reason != c.reason || e.ID() != inplace.StepID(plans[c.name], c.typ) {
			t.Errorf("%s: %s reason %s (%s), want %s %s with the step id", c.name, e.Type(), d.Reason, d.Message, c.typ, c.reason)
		}
		checkPlan(t, d.Plan, plans[c.name])
	}
	// Once every function has settled every delivery (outputs are published
	// before the ack), a second outcome from a redelivery or a late
	// pod.updated would be on the stream.
	for _, fn := range []string{prepull.Name, patchpod.Name, verify.Name} {
		settled(t, b, fn)
	}
	if n := len(outcomes(t, b)); n != len(cases) {
		t.Errorf("%d outcome events on the stream, want exactly %d", n, len(cases))
	}
}

// runChain starts the three functions in the runner and the pod watcher,
// until the test ends.
func runChain(t *testing.T, w *world.World, b *bus.Bus, ns, pullNS string) {
	t.Helper()
	d := config.StandardDefaults()
	d.PrepullNamespace = pullNS
	store := config.NewStore(d, slog.New(slog.DiscardHandler))
	pc, vc := fntest.Identity(t, w, patchpod.RBAC, ns), fntest.Identity(t, w, verify.RBAC, ns)
	fns := []runner.Function{
		prepull.New(prepull.Deps{Client: fntest.Identity(t, w, prepull.RBAC, pullNS), Config: store, Recheck: 200 * time.Millisecond}),
		patchpod.New(patchpod.Deps{Client: pc, Guard: fntest.Guard(pc), Recorder: fntest.Recorder(t, pc, patchpod.Name)}),
		verify.New(verify.Deps{Client: vc, Guard: fntest.Guard(vc), Recorder: fntest.Recorder(t, vc, verify.Name), Config: store,
			Recheck: 200 * time.Millisecond, MinReady: 2 * time.Second}),
	}
	wc := fntest.Identity(t, w, watcher.RBAC, ns)
	inf := informers.NewSharedInformerFactoryWithOptions(wc, time.Minute, informers.WithNamespace(ns))
	wt, err := watcher.New(inf.Core().V1().Pods().Informer(), wc, b, watcher.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := runner.New(b, runner.Options{}, fns...)
	done := make(chan struct{}, 2)
	go func() { _ = r.Run(ctx); done <- struct{}{} }()
	go func() { _ = wt.Run(ctx); done <- struct{}{} }()
	inf.Start(ctx.Done())
	t.Cleanup(func() { cancel(); <-done; <-done; inf.Shutdown() })
	if err := world.Eventually(t.Context(), 30*time.Second, "runner ready", func(context.Context) (bool, error) {
		return r.Ready(), nil
	}); err != nil {
		t.Fatal(err)
	}
}

// outcomes reads every outcome event on the stream, by pod UID.
func outcomes(t *testing.T, b *bus.Bus) map[string]cloudevents.Event {
	t.Helper()
	ctx := t.Context()
	c, err := b.JetStream().OrderedConsumer(ctx, b.Config().Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{b.Config().Prefix + ".upgrade.>"}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]cloudevents.Event{}
	for {
		batch, err := c.Fetch(100, jetstream.FetchMaxWait(300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			e, err := bus.Decode(ctx, m.Subject(), m.Headers(), m.Data())
			if err != nil {
				t.Fatal(err)
			}
			if e.Type() == events.UpgradePlanned {
				continue
			}
			d := fntest.Data[events.OutcomeData](t, e)
			if prev, dup := out[d.Plan.Pod.UID]; dup {
				t.Errorf("two outcomes for %s: %s and %s", d.Plan.Pod, prev.Type(), e.Type())
			}
			out[d.Plan.Pod.UID] = e
		}
		if n == 0 {
			return out
		}
	}
}

func keys(m map[string]cloudevents.Event) []string {
	var out []string
	for k, e := range m {
		out = append(out, k+"="+e.Type())
	}
	return out
}

// settled waits until the function's durable consumer has acked or
// terminated every delivery: its ack floor at the last delivered message,
// nothing waiting for an ack or a redelivery.
func settled(t *testing.T, b *bus.Bus, function string) {
	t.Helper()
	err := world.Eventually(t.Context(), fntest.Timeout, function+"'s deliveries settled", func(ctx context.Context) (bool, error) {
		c, err := b.Consumer(ctx, function)
		if err != nil {
			return false, err
		}
		ci, err := c.Info(ctx)
		if err != nil {
			return false, err
		}
		return ci.AckFloor.Stream == ci.Delivered.Stream && ci.NumAckPending == 0 && ci.NumRedelivered == 0 && ci.NumPending == 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
