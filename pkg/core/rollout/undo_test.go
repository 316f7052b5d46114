package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

// moved is a rollout of B that moved pods off the digests given by pod.
func moved(id string, from map[string]string, state PodState) *Rollout {
	r := &Rollout{UpgradeID: id, Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Push: events.UpgradeRequestData{ImagePushedData: pushOf("1.3.0", dB, time.Time{})}, Phase: Completed, Pods: map[string]*Pod{}}
	for name, digest := range from {
		r.Pods[name] = &Pod{Name: name, UID: name, State: state, UpgradeID: id, Containers: []events.ContainerPlan{
			{Name: "app", FromImage: "r/shop/web:1.2.0", FromImageID: "r/shop/web@" + digest, ToImage: "r/shop/web:1.3.0@" + dB}}}
	}
	return r
}

// inplace undo goes back to what the pods of the last rollout that moved
// pods ran before it, as the record has it; a refused or rejected rollout
// after it (a record of its own) does not hide it.
func TestUndoable(t *testing.T) {
	back := UndoTarget{Image: "r/shop/web:1.2.0", Digest: dA, Containers: []string{"app"}}
	t.Run("the last rollout", func(t *testing.T) {
		m, err := Undoable(moved("u-1", map[string]string{"web-0": dA, "web-1": dA}, Succeeded))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Moved{UpgradeID: "u-1", Target: "r/shop/web:1.3.0@" + dB, Back: back}, m); diff != "" {
			t.Errorf("undoable (-want +got):\n%s", diff)
		}
		if got := back.Ref(); got != "r/shop/web:1.2.0@"+dA {
			t.Errorf("ref %s", got)
		}
	})
	t.Run("carried past a refused push", func(t *testing.T) {
		prev := moved("u-1", map[string]string{"web-0": dA}, Succeeded)
		refused := Begin(prev, "u-2", prev.Workload, events.UpgradeRequestData{ImagePushedData: pushOf("1.4.0", dC, time.Time{})}, Options{}, time.Now())
		refused.Phase = Refused
		rejected := Begin(refused, "u-3", prev.Workload, events.UpgradeRequestData{ImagePushedData: pushOf("1.5.0", dC, time.Time{})}, Options{}, time.Now())
		rejected.Phase = Rejected
		m, err := Undoable(rejected)
		if err != nil || m.UpgradeID != "u-1" || m.Back.Digest != dA {
			t.Errorf("undoable after a refusal and a rejection: %+v, %v; want u-1 back to %s", m, err, dA)
		}
	})
	t.Run("nothing moved", func(t *testing.T) {
		_, err := Undoable(moved("u-1", map[string]string{"web-0": dA}, RolledBack))
		if err == nil || !strings.Contains(err.Error(), "nothing to undo") {
			t.Errorf("undo of a rollout that moved nothing: %v", err)
		}
	})
	t.Run("pods ran different digests", func(t *testing.T) {
		prev := moved("u-1", map[string]string{"web-0": dA, "web-1": dC}, Succeeded)
		if _, err := Undoable(prev); err == nil || !strings.Contains(err.Error(), "ran different images") {
			t.Errorf("undo of pods that ran different digests: %v", err)
		}
		// Carried, it stays refused, with its reason.
		next := Begin(prev, "u-2", prev.Workload, events.UpgradeRequestData{ImagePushedData: pushOf("1.4.0", dC, time.Time{})}, Options{}, time.Now())
		if _, err := Undoable(next); err == nil || !strings.Contains(err.Error(), "ran different images") {
			t.Errorf("carried: %v", err)
		}
	})
	t.Run("a pod moved by a superseded upgrade is not this one's", func(t *testing.T) {
		r := moved("u-2", map[string]string{"web-0": dA}, Succeeded)
		r.Pods["web-0"].UpgradeID = "u-1"
		if _, err := Undoable(r); err == nil {
			t.Error("undo of pods another upgrade moved: no error")
		}
	})
}
