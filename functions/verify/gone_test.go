package verify

import (
	"context"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

// recordSays is a guard whose rollout record has every upgrade of a gone
// pod in the state ended ("": in flight).
type recordSays struct {
	confirming
	ended string
}

func (g recordSays) Ended(context.Context, events.Plan) (string, error) { return g.ended, nil }

// The pod.updated "deleted" of a pod whose upgrade succeeded without a
// gate (its state still Patched), seen last with its containers stopped:
// PodDeleted only while the record has the upgrade in flight; recorded
// over, nothing for the pod.updated and the recorded end, by id, for the
// timer. The world test TestAPodDeletedAfterItsSuccessIsNotReportedGone
// runs it against an API server.
func TestGoneAfterItsEndIsNotReportedGone(t *testing.T) {
	last, plan := landedPod(t)
	last.Status.ContainerStatuses[0].Ready = false
	last.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}
	if st, _ := inplace.ParseState(last); !inplace.InFlight(last, st) {
		t.Fatal("the last-seen pod does not read in flight: no deleted pod.updated would be published")
	}
	for _, c := range []struct {
		ended          string
		updated, timer string // the outcome of each input; "": none
		reason         string
	}{
		{"", events.UpgradeFailed, events.UpgradeFailed, inplace.ReasonPodDeleted},
		{"Succeeded", "", events.UpgradeSucceeded, inplace.ReasonUpdated},
		{"Deleted", events.UpgradeFailed, events.UpgradeFailed, inplace.ReasonPodDeleted},
	} {
		t.Run("record "+c.ended, func(t *testing.T) {
			for _, in := range []struct{ typ, want string }{{events.PodUpdated, c.updated}, {events.PodPatched, c.timer}} {
				f := New(Deps{Client: fake.NewClientset(), Guard: recordSays{ended: c.ended},
					Clock: clocktesting.NewFakePassiveClock(t0.Add(10e9))})
				e := podUpdated(t, "deleted-1", last)
				if in.typ == events.PodPatched {
					e = podPatched(t, plan, "10")
				}
				outs, err := f.Handle(t.Context(), e)
				if err != nil {
					t.Fatalf("%s: %v", in.typ, err)
				}
				switch {
				case in.want == "" && len(outs) != 0:
					t.Errorf("%s of the deleted pod: %v; want nothing", in.typ, outcomes(outs))
				case in.want == "":
				case len(outs) != 1 || outs[0].Type() != in.want:
					t.Errorf("%s of the deleted pod: %v; want %s", in.typ, outcomes(outs), in.want)
				case outs[0].ID() != inplace.StepID(plan, in.want):
					t.Errorf("%s: id %s; want the step id", in.typ, outs[0].ID())
				default:
					var d events.OutcomeData
					if err := outs[0].DataAs(&d); err != nil || d.Reason != c.reason {
						t.Errorf("%s: reason %s (%v); want %s", in.typ, d.Reason, err, c.reason)
					}
				}
			}
		})
	}

	// This process confirmed the success on the stream: the record need not
	// have it yet.
	f := New(Deps{Client: fake.NewClientset(), Guard: recordSays{}, Clock: clocktesting.NewFakePassiveClock(t0.Add(10e9))})
	ok := event(t, inplace.StepID(plan, events.UpgradeSucceeded), events.UpgradeSucceeded, events.OutcomeData{Plan: plan})
	f.Published(podUpdated(t, "ready-1", last), []cloudevents.Event{ok})
	if outs, err := f.Handle(t.Context(), podUpdated(t, "deleted-1", last)); err != nil || len(outs) != 0 {
		t.Errorf("pod.updated of the deleted pod after a confirmed success: %v, %v; want nothing", outcomes(outs), err)
	}
}
