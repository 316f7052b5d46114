package prepull_test

import (
	"testing"

	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
)

// A pull counts done at the kubelet's Pulled Event, as its least-privileged
// identity reads it: with Changes fed by the Events alone (no pod watch)
// and a recheck of an hour, one delivery starts the pre-pull pod, is woken
// by the kubelet's Pulled Event and reports the pull then, before the pod's
// status shows its container. Without the Events the delivery is never
// woken and answers "not yet (1h)".
func TestAPullEndsAtTheKubeletsPulledEvent(t *testing.T) {
	pc := startPull(t, "prepull/reported", "up-e")
	inf, err := prepull.NewEventInformer(pc.client, pc.pullNS)
	if err != nil {
		t.Fatal(err)
	}
	keys := &notify.Keys{}
	if _, err := inf.AddEventHandler(prepull.WatchEvents(keys)); err != nil {
		t.Fatal(err)
	}
	go inf.Run(t.Context().Done())
	pc.reportedByOneDelivery(t, prepull.Deps{Changes: keys, Reports: prepull.EventReports{Informer: inf}})
}
