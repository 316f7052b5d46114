package prepull_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/prepull"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/bus/notify"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// A pull counts done at the kubelet's Pulled Event, as its least-privileged
// identity reads it: with Changes fed by the Events alone (no pod watch)
// and a recheck of an hour, one delivery starts the pre-pull pod, is woken
// by the kubelet's Pulled Event and reports the pull then, before the pod's
// status shows its container. Without the Events the delivery is never
// woken and answers "not yet (1h)".
func TestAPullEndsAtTheKubeletsPulledEvent(t *testing.T) {
	w := world.Shared(t)
	appNS, pullNS := w.NewNamespace(t), w.NewNamespace(t)
	restrict(t, w, pullNS)
	client := fntest.Identity(t, w, prepull.RBAC, pullNS)
	v1 := fntest.Push(t, w, "prepull/reported", "v1")
	v2 := fntest.Push(t, w, "prepull/reported", "v2", registry.WithSizeMB(5))
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-e", v2)

	inf, err := prepull.NewEventInformer(client, pullNS)
	if err != nil {
		t.Fatal(err)
	}
	keys := &notify.Keys{}
	if _, err := inf.AddEventHandler(prepull.WatchEvents(keys)); err != nil {
		t.Fatal(err)
	}
	go inf.Run(t.Context().Done())
	d := config.StandardDefaults()
	d.PrepullNamespace = pullNS
	f := prepull.New(prepull.Deps{Client: client, Config: config.NewStore(d, slog.New(slog.DiscardHandler)),
		Changes: keys, Recheck: time.Hour, Reports: prepull.EventReports{Informer: inf}})

	r := fntest.Drive(t, f.Handle, planned(t, plan))
	got := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled))
	if r.NotYet != 0 || got.Skipped != "" || got.PullMillis <= 0 {
		t.Errorf("prepulled skipped %q in %dms after %d not-yets; want a pull reported by the one delivery", got.Skipped, got.PullMillis, r.NotYet)
	}
	waitNoPrepullPods(t, w, pullNS)
}
