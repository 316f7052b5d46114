package controller_test

import (
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// recordRevision is the revision of the web Deployment's record.
func (e *env) recordRevision() uint64 {
	e.T.Helper()
	_, rev, err := e.KV.Get(e.T.Context(), rollout.Key(events.ObjectRef{Kind: "Deployment", Namespace: e.NS, Name: "web"}))
	if err != nil {
		e.T.Fatal(err)
	}
	return rev
}

// An outcome the record holds already (here another replica's verify
// reported the same success, under another id) records nothing and
// writes no record: a record holds every pod, and each write is the whole
// rollout, for the bucket and every watcher of it.
func TestAnOutcomeRecordedAlreadyWritesNoRecord(t *testing.T) {
	e := newEnv(t)
	planned := e.pushThree()
	var p events.Plan
	for _, p = range planned {
	}
	e.Handle(e.Outcome(events.UpgradeSucceeded, p, ""))
	before := e.recordRevision()
	again := e.Outcome(events.UpgradeSucceeded, p, "")
	again.SetID("another-replicas-verify")
	if outs := e.Handle(again); len(outs) != 0 {
		t.Errorf("an outcome recorded already emitted %s; want nothing", shortTypes(outs))
	}
	if after := e.recordRevision(); after != before {
		t.Errorf("an outcome recorded already wrote the record (revision %d, then %d); want no write", before, after)
	}
	if got := e.State("Deployment", "web").Pods[p.Pod.Name]; got.State != rollout.Succeeded {
		t.Errorf("pod %s is %s; want Succeeded", got.Name, got.State)
	}
}

// A redelivered outcome (its first handling wrote the record, then its
// emits were lost) records nothing more but emits again what it did: the
// plan of the pod its success freed a slot for, then the completion.
func TestARedeliveredOutcomeEmitsWhatItDidAgain(t *testing.T) {
	e := newEnv(t)
	web12, _ := e.Image("web", "1.2.0")
	_, d13 := e.Image("web", "1.3.0")
	e.Create(controllertest.Spec{Name: "web", Replicas: 2, Containers: []corev1.Container{controllertest.Container("app", web12)},
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	first := controllertest.Plans(t, e.Handle(e.Pushed("push-1", "web", "1.3.0", d13)))
	if len(first) != 1 {
		t.Fatalf("planned %d pods; want 1 (max-unavailable 1)", len(first))
	}
	var a events.Plan
	for _, a = range first {
	}
	freed := e.Outcome(events.UpgradeSucceeded, a, "")
	second := e.Handle(freed)
	if len(controllertest.Plans(t, second)) != 1 {
		t.Fatalf("the first success planned %s; want the other pod", shortTypes(second))
	}
	if again := e.Handle(freed); !sameEvents(again, second) {
		t.Errorf("the redelivered success emitted %s; want what it emitted first, %s", shortTypes(again), shortTypes(second))
	}
	var b events.Plan
	for _, b = range controllertest.Plans(t, second) {
	}
	last := e.Outcome(events.UpgradeSucceeded, b, "")
	done := e.Handle(last)
	if !hasType(done, events.RolloutCompleted) {
		t.Fatalf("the last success emitted %s; want rollout.completed", shortTypes(done))
	}
	if again := e.Handle(last); !hasType(again, events.RolloutCompleted) {
		t.Errorf("the redelivered last success emitted %s; want rollout.completed again", shortTypes(again))
	}
}

// sameEvents: got and want are the same events by id, in order.
func sameEvents(got, want []cloudevents.Event) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ID() != want[i].ID() {
			return false
		}
	}
	return true
}

// hasType: outs holds an event of type typ.
func hasType(outs []cloudevents.Event, typ string) bool {
	for _, o := range outs {
		if o.Type() == typ {
			return true
		}
	}
	return false
}
