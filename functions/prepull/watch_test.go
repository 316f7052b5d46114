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
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// A pull's completion reaches the waiting delivery from the watch: with
// the pod informer feeding Changes and a recheck of an hour, one delivery
// starts the pre-pull pod, waits, is woken by the pod's status, and
// reports the pull; no "not yet" at all, so no timer could have done it.
// Without the watch the first delivery answers "not yet (1h)".
func TestPullCompletionComesFromTheWatch(t *testing.T) {
	w := world.Shared(t)
	appNS, pullNS := w.NewNamespace(t), w.NewNamespace(t)
	restrict(t, w, pullNS)
	client := fntest.Identity(t, w, prepull.RBAC, pullNS)
	v1 := fntest.Push(t, w, "prepull/watched", "v1")
	v2 := fntest.Push(t, w, "prepull/watched", "v2", registry.WithSizeMB(5))
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-w", v2)

	cache, err := kube.NewPodCache(w.Client(), 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := &notify.Keys{}
	if _, err := cache.PodInformer().AddEventHandler(prepull.Watch(keys)); err != nil {
		t.Fatal(err)
	}
	if err := cache.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := config.StandardDefaults()
	d.PrepullNamespace = pullNS
	f := prepull.New(prepull.Deps{Client: client, Config: config.NewStore(d, slog.New(slog.DiscardHandler)),
		Changes: keys, Recheck: time.Hour})

	r := fntest.Drive(t, f.Handle, planned(t, plan))
	got := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled))
	if r.NotYet != 0 || got.Skipped != "" || got.PullMillis <= 0 {
		t.Errorf("prepulled skipped %q in %dms after %d not-yets; want a pull reported by the one delivery", got.Skipped, got.PullMillis, r.NotYet)
	}
	waitNoPrepullPods(t, w, pullNS)
}
