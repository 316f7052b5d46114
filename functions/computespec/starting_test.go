package computespec

import (
	"errors"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// TestNothingYet: a request that finds containers not running (or none of
// the pods its workload wants) waits, within its deadline from the
// request's time; past it, or for a reason that does not pass, it is
// refused.
func TestNothingYet(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	f := New(controller.New(controller.Deps{Now: clock}), Deps{Now: clock})
	ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	tg := controller.Target{Workload: kube.Workload{Ref: ref, Replicas: 1}}
	notRunning := []rollout.Candidate{{Pod: events.PodRef{Name: "web-1"}, Why: "sidecar: already asks cpu 1; app: not running"}}
	absent := []rollout.Candidate{{Pod: events.PodRef{Name: "web-1"}, Why: `app: the pod has no container "app"`}}
	for _, c := range []struct {
		name  string
		cands []rollout.Candidate
		asked time.Time
		wait  bool
	}{
		{"not running, within the deadline", notRunning, now.Add(-time.Minute), true},
		{"no pod in the cache yet", nil, now, true},
		{"not running past the deadline", notRunning, now.Add(-5 * time.Minute), false},
		{"no time on the request", notRunning, time.Time{}, false},
		{"a time far ahead", notRunning, now.Add(time.Hour), false},
		{"a container the pod lacks", absent, now, false},
	} {
		err := f.nothingYet(tg, "restart", ref, []string{"app"}, c.cands, c.asked, 5*time.Minute)
		kind, _ := settle.Classify(err)
		if waits := errors.Is(err, controller.ErrRecordBusy) && kind == settle.Later; waits != c.wait {
			t.Errorf("%s: %v (%s); want waiting %v", c.name, err, kind, c.wait)
		}
		if !c.wait && kind != settle.Fail {
			t.Errorf("%s: %v; want a refusal", c.name, err)
		}
	}
	scaledToZero := controller.Target{Workload: kube.Workload{Ref: ref}}
	if err := f.nothingYet(scaledToZero, "restart", ref, nil, nil, now, time.Minute); errors.Is(err, controller.ErrRecordBusy) {
		t.Errorf("a workload that wants no pods waits: %v", err)
	}
}
