package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/controller/controllertest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
	"github.com/inplace-dev/inplace/pkg/tools/replay"
)

// fakeCluster is compute-spec's view of one Deployment's pods, as a test
// drives them; the watchdog tests need no API server.
type fakeCluster struct {
	wl   kube.Workload
	pods map[string]*corev1.Pod
}

var web = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}

const (
	oldDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	newDigest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func newFakeCluster(n int) *fakeCluster {
	c := &fakeCluster{pods: map[string]*corev1.Pod{}, wl: kube.Workload{Ref: web, Replicas: n,
		Meta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Annotations: map[string]string{"inplace.dev/policy": "semver:minor"}}}}
	for i := range n {
		c.add(fmt.Sprintf("web-%d", i))
	}
	return c
}

func (c *fakeCluster) add(name string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "r.example/shop/web:1.2.0"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "r.example/shop/web:1.2.0",
				ImageID: "r.example/shop/web@" + oldDigest, Ready: true}}}}
	c.pods[name] = p
	return p
}

func (c *fakeCluster) PodsUsingRepository(string) ([]*corev1.Pod, error) { return c.PodsOf(web) }
func (c *fakeCluster) OwnerOf(*corev1.Pod) (kube.Workload, bool, error)  { return c.wl, true, nil }
func (c *fakeCluster) Get(events.ObjectRef) (kube.Workload, bool, error) { return c.wl, true, nil }
func (c *fakeCluster) PodsOf(events.ObjectRef) ([]*corev1.Pod, error) {
	out := make([]*corev1.Pod, 0, len(c.pods))
	for _, p := range c.pods {
		out = append(out, p)
	}
	return out, nil
}

// setState writes the pod's inplace.dev/state as patch-pod or verify would.
func (c *fakeCluster) setState(name string, st inplace.State) {
	c.pods[name].Annotations = map[string]string{inplace.StateAnnotation: st.Encode()}
}

// onTarget sets the pod of plan to its target, running.
func (c *fakeCluster) onTarget(plan events.Plan) {
	p := c.pods[plan.Pod.Name]
	p.Spec.Containers[0].Image = plan.Containers[0].ToImage
	p.Status.ContainerStatuses[0].ImageID = "r.example/shop/web@" + newDigest
	p.Status.ContainerStatuses[0].RestartCount++
}

// watched is a compute-spec on a fake cluster, with a clock the test moves.
type watched struct {
	t     *testing.T
	c     *fakeCluster
	store *replay.MemStore
	fn    *computespec.Function
	ro    *controller.Rollouts
	now   time.Time
}

func newWatched(t *testing.T, pods int, w planner.Watchdog) *watched {
	x := &watched{t: t, c: newFakeCluster(pods), store: replay.NewMemStore(nil), now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	x.fn, x.ro = controllertest.NewChain(controller.Deps{Cache: x.c, Store: x.store, Watchdog: w,
		Defaults: config.NewStore(config.StandardDefaults(), nil), Now: func() time.Time { return x.now }})
	return x
}

// push handles the push of 1.3.0 and returns the pods it planned.
func (x *watched) push() map[string]events.Plan {
	x.t.Helper()
	d := events.ImagePushedData{Registry: "r.example", Repository: "shop/web", Tag: "1.3.0", Digest: newDigest, Origin: "test"}
	e, err := events.New("push-1", events.ImagePushed, events.Source("test"), d.Ref(), d)
	if err != nil {
		x.t.Fatal(err)
	}
	outs, err := x.fn.Handle(x.t.Context(), e)
	if err != nil {
		x.t.Fatal(err)
	}
	return controllertest.Plans(x.t, outs)
}

// sweep runs the watchdog at now+after and returns its events by type.
func (x *watched) sweep(after time.Duration) map[string][]cloudevents.Event {
	x.t.Helper()
	x.now = x.now.Add(after)
	outs, err := x.ro.Sweep(x.t.Context())
	if err != nil {
		x.t.Fatalf("Sweep: %v", err)
	}
	got := map[string][]cloudevents.Event{}
	for _, o := range outs {
		got[o.Type()] = append(got[o.Type()], o)
	}
	return got
}

func (x *watched) rollout() *rollout.Rollout {
	x.t.Helper()
	raw, _, err := x.store.Get(x.t.Context(), rollout.Key(web))
	if err != nil || raw == nil {
		x.t.Fatalf("rollout: %v", err)
	}
	var r rollout.Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		x.t.Fatal(err)
	}
	return &r
}

func only(t *testing.T, plans map[string]events.Plan) events.Plan {
	t.Helper()
	if len(plans) != 1 {
		t.Fatalf("planned %d pods; want 1", len(plans))
	}
	for _, p := range plans {
		return p
	}
	return events.Plan{}
}

// An outcome that never reaches compute-spec (lost, dead-lettered) is
// recorded from the pod's state by the watchdog, and the rollout goes on to
// the next pod, without any event arriving.
func TestWatchdogRecordsAnOutcomeThatNeverArrived(t *testing.T) {
	x := newWatched(t, 2, planner.Watchdog{})
	a := only(t, x.push())
	if got := x.sweep(time.Second); len(got) != 0 || x.rollout().Pods[a.Pod.Name].State != rollout.InFlight {
		t.Fatalf("a pod on time: %v, %s", got, x.rollout().Pods[a.Pod.Name].State)
	}
	// verify finished the pod; its upgrade.succeeded was lost.
	x.c.onTarget(a)
	x.c.setState(a.Pod.Name, inplace.State{UpgradeID: a.UpgradeID, Phase: inplace.PhaseSucceeded, Reason: "Updated",
		PatchedAt: x.now, FinishedAt: x.now})
	got := x.sweep(time.Second)
	r := x.rollout()
	if r.Pods[a.Pod.Name].State != rollout.Succeeded || len(got[events.UpgradePlanned]) != 1 {
		t.Fatalf("pod %s, events %v; want it recorded Succeeded and the next pod planned", r.Pods[a.Pod.Name].State, got)
	}
	b, err := events.As[events.Plan](got[events.UpgradePlanned][0])
	if err != nil || b.Pod.Name == a.Pod.Name {
		t.Fatalf("next plan %+v %v", b, err)
	}
	x.c.onTarget(b)
	x.c.setState(b.Pod.Name, inplace.State{UpgradeID: b.UpgradeID, Phase: inplace.PhaseSucceeded, PatchedAt: x.now, FinishedAt: x.now})
	got = x.sweep(time.Second)
	if r := x.rollout(); r.Phase != rollout.Completed || len(got[events.RolloutCompleted]) != 1 {
		t.Fatalf("phase %s, events %v; want the rollout completed by the watchdog alone", r.Phase, got)
	}
	if again := x.sweep(time.Minute); len(again) != 0 {
		t.Errorf("a completed rollout was swept again: %v", again)
	}
}

// A pod whose plan was lost before it was patched is reminded after its
// deadline, each reminder a new try recorded in the rollout record (an
// upgrade.planned with the next attempt, its id that attempt's step id, so
// pre-pull's and patch-pod's events for it are new too), then given up:
// Failed with reason Deadline, and the rollout halts with the reason;
// nothing is left in flight. A sweep again within a reminder's window
// publishes that reminder again under the same id (the stream drops it).
func TestWatchdogRemindsThenGivesUpALatePod(t *testing.T) {
	w := planner.Watchdog{Slack: 10 * time.Second, NudgeEvery: 30 * time.Second, Nudges: 2, PrepullTimeout: time.Minute}
	x := newWatched(t, 2, w)
	a := only(t, x.push())
	if got := x.sweep(time.Minute + 9*time.Second); len(got) != 0 {
		t.Fatalf("reminded before the deadline (grace 0 + prepull 1m + slack 10s): %v", got)
	}
	ids := map[string]bool{inplace.StepID(a, events.UpgradePlanned): true}
	for i, after := range []time.Duration{2 * time.Second, 30 * time.Second} {
		got := x.sweep(after)
		if len(got[events.UpgradePlanned]) != 1 {
			t.Fatalf("reminder %d: %v", i+1, got)
		}
		e := got[events.UpgradePlanned][0]
		p, _ := events.As[events.Plan](e)
		if p.Pod != a.Pod || p.UpgradeID != a.UpgradeID || p.Attempt != i+1 || ids[e.ID()] || e.ID() != inplace.StepID(p, events.UpgradePlanned) {
			t.Errorf("reminder %d: pod %v attempt %d id %s; want the same plan as attempt %d, under that attempt's step id", i+1, p.Pod, p.Attempt, e.ID(), i+1)
		}
		if got := x.rollout().Pods[a.Pod.Name].Attempt(); got != i+1 {
			t.Errorf("reminder %d: the record's attempt is %d", i+1, got)
		}
		again := x.sweep(time.Second)
		if n := len(again[events.UpgradePlanned]); n != 1 || again[events.UpgradePlanned][0].ID() != e.ID() {
			t.Errorf("reminder %d swept again: %v; want the same reminder, same id", i+1, again)
		}
		x.now = x.now.Add(-time.Second)
		ids[e.ID()] = true
	}
	got := x.sweep(30 * time.Second)
	r := x.rollout()
	if p := r.Pods[a.Pod.Name]; p.State != rollout.Failed || p.Reason != planner.ReasonDeadline {
		t.Errorf("pod %s %q; want Failed Deadline", p.State, p.Reason)
	}
	if r.Phase != rollout.Halted || r.Reason != planner.ReasonDeadline || !strings.Contains(r.Message, "planned, not patched") {
		t.Errorf("rollout %s %q %q", r.Phase, r.Reason, r.Message)
	}
	if len(got[events.RolloutHalted]) != 1 {
		t.Errorf("events %v; want rollout.halted", got)
	}
}

// A patched pod whose verify went quiet is reminded with pod.patched from
// its state once its verify deadline (verify-seconds + minReadySeconds +
// slack) has passed.
func TestWatchdogRemindsVerify(t *testing.T) {
	x := newWatched(t, 1, planner.Watchdog{Slack: 10 * time.Second, NudgeEvery: time.Minute, Nudges: 1, VerifySeconds: 60})
	a := only(t, x.push())
	x.c.setState(a.Pod.Name, inplace.State{UpgradeID: a.UpgradeID, Phase: inplace.PhasePatched, PatchedAt: x.now, VerifySeconds: 60,
		Owner: web, Target: a.Target, Containers: []inplace.ContainerState{{Name: "app", PreviousImage: "r.example/shop/web:1.2.0", TargetImage: a.Containers[0].ToImage}}})
	if got := x.sweep(69 * time.Second); len(got) != 0 {
		t.Fatalf("reminded within the verify deadline: %v", got)
	}
	got := x.sweep(2 * time.Second)
	if len(got[events.PodPatched]) != 1 {
		t.Fatalf("events %v; want pod.patched", got)
	}
	d, err := events.As[events.PatchedData](got[events.PodPatched][0])
	if err != nil || d.Plan.UpgradeID != a.UpgradeID || d.Plan.Pod.UID != a.Pod.UID {
		t.Errorf("pod.patched %+v %v", d, err)
	}
	got = x.sweep(time.Minute)
	if r := x.rollout(); r.Phase != rollout.Halted || r.Pods[a.Pod.Name].State != rollout.Failed || !strings.Contains(r.Message, "patched, not verified") {
		t.Errorf("after the reminders: %s %s %q; events %v", r.Phase, r.Pods[a.Pod.Name].State, r.Message, got)
	}
}

// A pod reminded while it waited to be patched, then patched by that
// reminder's try, whose verify goes quiet, is reminded as soon as its
// verify deadline passes: the reminders of a new wait count afresh. The
// pod.patched reminder is the next try, and verify's outcome for it gets
// that try's ids.
func TestWatchdogRemindsVerifyAfterADispatchReminder(t *testing.T) {
	x := newWatched(t, 1, planner.Watchdog{Slack: 10 * time.Second, NudgeEvery: time.Minute, Nudges: 3,
		PrepullTimeout: time.Minute, VerifySeconds: 60})
	a := only(t, x.push())
	got := x.sweep(time.Minute + 11*time.Second)
	if len(got[events.UpgradePlanned]) != 1 {
		t.Fatalf("events %v; want upgrade.planned reminded", got)
	}
	x.c.setState(a.Pod.Name, inplace.State{UpgradeID: a.UpgradeID, Phase: inplace.PhasePatched, PatchedAt: x.now, VerifySeconds: 60,
		Attempt: 1, Owner: web, Target: a.Target, Containers: []inplace.ContainerState{{Name: "app", PreviousImage: "r.example/shop/web:1.2.0",
			TargetImage: a.Containers[0].ToImage}}})
	if got := x.sweep(69 * time.Second); len(got) != 0 {
		t.Fatalf("reminded within the verify deadline: %v", got)
	}
	got = x.sweep(2 * time.Second)
	if len(got[events.PodPatched]) != 1 {
		t.Fatalf("events %v; want pod.patched at once", got)
	}
	e := got[events.PodPatched][0]
	d, err := events.As[events.PatchedData](e)
	if err != nil || d.Plan.Attempt != 2 || e.ID() != inplace.StepID(d.Plan, events.PodPatched) {
		t.Errorf("pod.patched: attempt %d id %s %v; want attempt 2 under its step id", d.Plan.Attempt, e.ID(), err)
	}
}

// A pod deleted in flight, whose outcome nobody reports, is recorded as
// deleted; its replacement is planned.
func TestWatchdogRecordsADeletedPod(t *testing.T) {
	x := newWatched(t, 2, planner.Watchdog{})
	a := only(t, x.push())
	delete(x.c.pods, a.Pod.Name)
	x.c.add("web-9")
	got := x.sweep(time.Second)
	r := x.rollout()
	if c := r.Counts(); c.Deleted != 1 || r.Phase != rollout.Running || len(got[events.UpgradePlanned]) != 1 {
		t.Fatalf("counts %+v phase %s events %v", c, r.Phase, got)
	}
}

// A rollout whose pods wait for a slot that never frees (another pod stays
// NotReady, nothing in flight) is planned again by each sweep (nothing frees a slot), then halted after
// the stall deadline.
func TestWatchdogHaltsAStalledRollout(t *testing.T) {
	x := newWatched(t, 3, planner.Watchdog{NudgeEvery: time.Minute, StallDeadline: 10 * time.Minute})
	a := only(t, x.push())
	onTarget := func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = a.Containers[0].ToImage
		p.Status.ContainerStatuses[0].ImageID = "r.example/shop/web@" + newDigest
	}
	onTarget(x.c.pods[a.Pod.Name])
	for _, p := range x.c.pods {
		if p.Name != a.Pod.Name {
			// Someone else moved this pod, and it stays NotReady: it takes
			// the only slot, and needs nothing from this rollout.
			onTarget(p)
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			break
		}
	}
	outcome, err := events.New("ok-a", events.UpgradeSucceeded, events.Source("verify"), a.Pod.String(),
		events.OutcomeData{Plan: a, Outcome: events.OutcomeSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.fn.Handle(t.Context(), outcome); err == nil {
		t.Fatal("a stalled rollout answered without waiting")
	}
	var got map[string][]cloudevents.Event
	for range 10 {
		if got = x.sweep(time.Minute); len(got) != 0 || x.rollout().Phase != rollout.Running {
			t.Fatalf("within the stall deadline: %s, events %v", x.rollout().Phase, got)
		}
	}
	got = x.sweep(time.Second)
	r := x.rollout()
	if r.Phase != rollout.Halted || r.Reason != controller.ReasonStalled || len(got[events.RolloutHalted]) != 1 {
		t.Errorf("after 10 minutes: %s %q %q; events %v", r.Phase, r.Reason, r.Message, got)
	}
}

// syncs counts the template syncs driven; each finishes at once.
type syncs struct{ n int }

func (s *syncs) Sync(context.Context, *rollout.Rollout) (rollout.Sync, bool, error) {
	s.n++
	return rollout.Sync{Step: controller.SyncDone}, true, nil
}

// A template sync nobody drives (the watchdog settled the rollout, so the
// bus has no input to redeliver, and the process was killed as it drove
// it) is driven by the watchdog once it has gone without a step for
// longer than a live driver would (2 × maxSyncWait), not after the
// stall's 90 s; one stepped just now is left to its driver.
func TestWatchdogDrivesAnUndrivenTemplateSync(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		since time.Duration
		want  int
		phase rollout.Phase
	}{{"stepped 2s ago", 2 * time.Second, 0, rollout.Syncing}, {"stepped 15s ago", 15 * time.Second, 1, rollout.Completed}} {
		t.Run(tt.name, func(t *testing.T) {
			syncer := &syncs{}
			c := newFakeCluster(1)
			r := &rollout.Rollout{UpgradeID: "u-1", Workload: web, Phase: rollout.Syncing, SettledBy: "watchdog-u-1",
				StartedAt: now.Add(-time.Minute), UpdatedAt: now.Add(-tt.since), ProgressAt: now.Add(-tt.since),
				Pods: map[string]*rollout.Pod{"web-0": {Name: "web-0", UID: "uid-web-0", State: rollout.Succeeded, UpgradeID: "u-1"}}}
			store := sweepOnce(t, r, c, syncer, now)
			raw, _, err := store.Get(t.Context(), rollout.Key(web))
			if err != nil {
				t.Fatal(err)
			}
			got, err := controller.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if syncer.n != tt.want || got.Phase != tt.phase {
				t.Errorf("sync driven %d times, rollout %s; want %d, %s", syncer.n, got.Phase, tt.want, tt.phase)
			}
		})
	}
}
