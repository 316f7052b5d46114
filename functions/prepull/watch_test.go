package prepull_test

import (
	"log/slog"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

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
	pc := startPull(t, "prepull/watched", "up-w")
	cache, err := kube.NewPodCache(pc.w.Client(), 0)
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
	pc.reportedByOneDelivery(t, prepull.Deps{Changes: keys})
}

// pullCase is a running pod planned onto a fresh 5 MiB image, and
// pre-pull's least-privileged identity over a pre-pull namespace of its
// own.
type pullCase struct {
	w      *world.World
	pullNS string
	client kubernetes.Interface
	plan   events.Plan
}

func startPull(t *testing.T, repo, upgradeID string) pullCase {
	t.Helper()
	w := world.Shared(t)
	appNS, pullNS := w.NewNamespace(t), w.NewNamespace(t)
	restrict(t, w, pullNS)
	client := fntest.Identity(t, w, prepull.RBAC, pullNS)
	v1 := fntest.Push(t, w, repo, "v1")
	v2 := fntest.Push(t, w, repo, "v2", registry.WithSizeMB(5))
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	return pullCase{w: w, pullNS: pullNS, client: client, plan: fntest.Plan(t, pod, upgradeID, v2)}
}

// reportedByOneDelivery runs pre-pull with deps (its client, config and a
// recheck of an hour filled in) and fails unless the one delivery of the
// plan reports the pull: no "not yet", so no timer could have done it.
func (pc pullCase) reportedByOneDelivery(t *testing.T, deps prepull.Deps) {
	t.Helper()
	d := config.StandardDefaults()
	d.PrepullNamespace = pc.pullNS
	deps.Client, deps.Config, deps.Recheck = pc.client, config.NewStore(d, slog.New(slog.DiscardHandler)), time.Hour
	f := prepull.New(deps)
	r := fntest.Drive(t, f.Handle, planned(t, pc.plan))
	got := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled))
	if r.NotYet != 0 || got.Skipped != "" || got.PullMillis <= 0 {
		t.Errorf("prepulled skipped %q in %dms after %d not-yets; want a pull reported by the one delivery", got.Skipped, got.PullMillis, r.NotYet)
	}
	waitNoPrepullPods(t, pc.w, pc.pullNS)
}
