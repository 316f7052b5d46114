package rollout

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

var (
	t0   = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	wl   = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	push = events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "r", Repository: "shop/web", Tag: "1.3.0", Origin: "test"}}
)

func plan() []events.ContainerPlan {
	return []events.ContainerPlan{{Name: "app", FromImage: "r/shop/web:1.2.0", ToImage: "r/shop/web:1.3.0"}}
}

// world is a fake workload: pods with readiness, as a test drives them.
type world map[string]*Candidate

func newWorld(n int, nodes int) world {
	w := world{}
	for i := range n {
		name := fmt.Sprintf("web-%02d", i)
		w[name] = &Candidate{Pod: events.PodRef{Namespace: "shop", Name: name, UID: "uid-" + name, Node: fmt.Sprintf("node-%d", i%nodes)},
			Ready: true, Ordinal: i, Containers: plan()}
	}
	return w
}

func (w world) cands() []Candidate {
	var out []Candidate
	for _, c := range w {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod.Name < out[j].Pod.Name })
	return out
}

func names(ps []*Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

func outcome(r *Rollout, name string) events.OutcomeData {
	p := r.Pods[name]
	return events.OutcomeData{Plan: events.Plan{UpgradeID: p.UpgradeID, Pod: events.PodRef{Namespace: "shop", Name: name, UID: p.UID}},
		Outcome: events.OutcomeSucceeded}
}

func TestBudgetIsNeverExceeded(t *testing.T) {
	for _, budget := range []int{1, 3, 5} {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(budget)))
			w := newWorld(20, 4)
			r := Begin(nil, "u-1", wl, push, Options{Budget: budget}, t0)
			step := 0
			check := func() {
				unavailable := 0
				for name, c := range w {
					if !c.Ready || r.Pods[name].State == InFlight {
						unavailable++
					}
				}
				if unavailable > budget {
					t.Fatalf("step %d: %d pods unavailable; budget %d", step, unavailable, budget)
				}
			}
			planned := Plan(r, w.cands(), "push", false, t0)
			if len(planned) != budget {
				t.Fatalf("first wave planned %d; want %d", len(planned), budget)
			}
			for !Settle(r, fmt.Sprint(step), t0) {
				step++
				check()
				var inflight []string
				for name, p := range r.Pods {
					if p.State == InFlight {
						inflight = append(inflight, name)
					}
				}
				if len(inflight) == 0 {
					t.Fatalf("step %d: nothing in flight and not settled: %+v", step, r.Pods)
				}
				sort.Strings(inflight)
				// The kubelet restarts one pod (NotReady), verify succeeds it (Ready).
				name := inflight[rng.IntN(len(inflight))]
				w[name].Ready = false
				check()
				w[name].Ready, w[name].Containers = true, nil
				Record(r, events.UpgradeSucceeded, outcome(r, name), "ok-"+name, t0)
				Plan(r, w.cands(), "ok-"+name, false, t0)
				if step > 200 {
					t.Fatal("no progress")
				}
			}
			if c := r.Counts(); c.Succeeded != 20 || c.Pods != 20 {
				t.Errorf("counts = %+v", c)
			}
			if r.Phase != Syncing {
				t.Errorf("phase = %s", r.Phase)
			}
		})
	}
}

func TestNotReadyPodsGoFirstAndCostNothing(t *testing.T) {
	w := newWorld(6, 2)
	w["web-03"].Ready, w["web-05"].Ready = false, false
	r := Begin(nil, "u-1", wl, push, Options{Budget: 3}, t0)
	got := names(Plan(r, w.cands(), "push", false, t0))
	// Two pods are already unavailable: both are planned, and one Ready pod fills the budget of 3.
	if diff := cmp.Diff([]string{"web-00", "web-03", "web-05"}, got); diff != "" {
		t.Errorf("planned (-want +got):\n%s", diff)
	}
}

func TestBrokenPodsAreFixedEvenWithNoBudgetLeft(t *testing.T) {
	w := newWorld(4, 1)
	for _, n := range []string{"web-00", "web-01"} {
		w[n].Ready = false
	}
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	got := names(Plan(r, w.cands(), "push", false, t0))
	if diff := cmp.Diff([]string{"web-00", "web-01"}, got); diff != "" {
		t.Errorf("planned (-want +got):\n%s", diff)
	}
}

func TestStatefulSetGoesHighestOrdinalFirst(t *testing.T) {
	w := newWorld(5, 5)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 2, OrderByOrdinal: true}, t0)
	if diff := cmp.Diff([]string{"web-03", "web-04"}, names(Plan(r, w.cands(), "push", false, t0))); diff != "" {
		t.Errorf("planned (-want +got):\n%s", diff)
	}
}

func TestOthersAreSpreadOverNodes(t *testing.T) {
	// The pods' names group them by node, as a ReplicaSet's random
	// suffixes may: web-00..02 on node-0, web-03..05 on node-1, web-06 on node-2.
	nodes := []string{"node-0", "node-0", "node-0", "node-1", "node-1", "node-1", "node-2"}
	for _, tc := range []struct {
		budget int
		want   [][]string // each wave, as the one before ends
	}{
		{1, [][]string{{"web-00"}, {"web-03"}, {"web-06"}, {"web-01"}, {"web-04"}, {"web-02"}, {"web-05"}}},
		{3, [][]string{{"web-00", "web-03", "web-06"}, {"web-01", "web-04", "web-02"}, {"web-05"}}},
	} {
		t.Run(fmt.Sprintf("budget %d", tc.budget), func(t *testing.T) {
			w := newWorld(len(nodes), 1)
			for i, n := range nodes {
				w[fmt.Sprintf("web-%02d", i)].Pod.Node = n
			}
			r := Begin(nil, "u-1", wl, push, Options{Budget: tc.budget}, t0)
			var got [][]string
			for wave := Plan(r, w.cands(), "push", false, t0); len(wave) > 0; {
				var order []string
				for _, p := range wave {
					order = append(order, p.Name)
				}
				got = append(got, order)
				var next []*Pod
				for _, name := range order { // each ends in turn, freeing its slot
					w[name].Containers = nil
					Record(r, events.UpgradeSucceeded, outcome(r, name), "ok-"+name, t0)
					next = append(next, Plan(r, w.cands(), "ok-"+name, false, t0)...)
				}
				wave = next
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("waves (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedeliveredInputReEmitsTheSamePlans(t *testing.T) {
	w := newWorld(5, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 2}, t0)
	first := names(Plan(r, w.cands(), "push-1", false, t0))
	again := names(Plan(Begin(r, "u-1", wl, push, Options{Budget: 2}, t0), w.cands(), "push-1", false, t0))
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("redelivery planned differently (-first +again):\n%s", diff)
	}
	if other := Plan(r, w.cands(), "something-else", false, t0); len(other) != 0 {
		t.Errorf("another input with a full budget planned %v", names(other))
	}
	inflight := 0
	for _, p := range r.Pods {
		if p.State == InFlight {
			inflight++
		}
	}
	if inflight != 2 {
		t.Errorf("%d in flight; want 2", inflight)
	}
}

func TestRollbackHaltsAndResumeRetries(t *testing.T) {
	w := newWorld(4, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	first := Plan(r, w.cands(), "push", false, t0)[0].Name
	o := outcome(r, first)
	o.Outcome, o.Reason, o.Message = events.OutcomeRolledBack, "ImagePullBackOff", "Back-off pulling image"
	Record(r, events.UpgradeRolledBack, o, "rb-1", t0)
	if r.Phase != Halted || r.HaltedBy != "rb-1" || r.Reason != "ImagePullBackOff" {
		t.Fatalf("phase %s by %q reason %q", r.Phase, r.HaltedBy, r.Reason)
	}
	if p := Plan(r, w.cands(), "later", false, t0); len(p) != 0 {
		t.Errorf("a halted rollout planned %v", names(p))
	}
	Record(r, events.UpgradeRolledBack, o, "rb-1-again", t0) // duplicate: no change
	if r.HaltedBy != "rb-1" {
		t.Errorf("a duplicate outcome changed the halt: %q", r.HaltedBy)
	}
	if !Resume(r, t0) || r.Phase != Running || r.Pods[first].State != Pending {
		t.Fatalf("resume: phase %s pod %s", r.Phase, r.Pods[first].State)
	}
	if got := names(Plan(r, w.cands(), "resume", false, t0)); len(got) != 1 || got[0] != first {
		t.Errorf("after resume planned %v; want the rolled-back pod %s again", got, first)
	}
	if got := r.Pods[first].Attempt(); got != 1 {
		t.Errorf("the re-plan is attempt %d; want 1 (a try of its own, its events not copies of the first's)", got)
	}
}

func TestPausedPlansNothing(t *testing.T) {
	w := newWorld(3, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 3}, t0)
	if p := Plan(r, w.cands(), "push", true, t0); len(p) != 0 {
		t.Errorf("paused workload planned %v", names(p))
	}
	if len(r.Pods) != 3 || r.Pods["web-00"].State != Pending {
		t.Errorf("paused rollout did not record its pods: %+v", r.Pods)
	}
}

func TestSupersedeKeepsInFlightAndRetargetsTheRest(t *testing.T) {
	w := newWorld(4, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	a := Plan(r, w.cands(), "push-1", false, t0)[0].Name
	Record(r, events.UpgradeSucceeded, outcome(r, a), "ok-a", t0)
	b := Plan(r, w.cands(), "ok-a", false, t0)[0].Name

	newer := push
	newer.Tag = "1.4.0"
	r2 := Begin(r, "u-2", wl, newer, Options{Budget: 1}, t0)
	if r2.Superseded != "u-1" || r2.Pods[b] == nil || r2.Pods[b].State != InFlight || r2.Pods[b].UpgradeID != "u-1" {
		t.Fatalf("in-flight pod not carried: %+v", r2.Pods)
	}
	// Every pod, the upgraded one too, needs 1.4.0 now; b is still in flight so no slot is free.
	if p := Plan(r2, w.cands(), "push-2", false, t0); len(p) != 0 {
		t.Errorf("planned %v while the budget is taken by the in-flight pod", names(p))
	}
	Record(r2, events.UpgradeSucceeded, outcome(r2, b), "ok-b", t0)
	if r2.Pods[b].State != Pending {
		t.Errorf("the superseded pod's outcome left it %s; want Pending for the new target", r2.Pods[b].State)
	}
	next := Plan(r2, w.cands(), "ok-b", false, t0)
	if len(next) != 1 || next[0].UpgradeID != "u-2" {
		t.Errorf("next plan %+v; want one pod under u-2", next)
	}
	if r2.Phase != Running {
		t.Errorf("a superseded success halted the new rollout: %s", r2.Phase)
	}
}

func TestSupersededFailureDoesNotHaltTheNewRollout(t *testing.T) {
	w := newWorld(2, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	a := Plan(r, w.cands(), "push-1", false, t0)[0].Name
	o := outcome(r, a)
	newer := push
	newer.Tag = "1.4.0"
	r2 := Begin(r, "u-2", wl, newer, Options{Budget: 1}, t0)
	o.Outcome = events.OutcomeRolledBack
	Record(r2, events.UpgradeRolledBack, o, "rb", t0)
	if r2.Phase != Running || r2.Pods[a].State != Pending {
		t.Errorf("phase %s, pod %s; want Running and the pod pending for the new target", r2.Phase, r2.Pods[a].State)
	}
}

func TestPodsComeAndGo(t *testing.T) {
	w := newWorld(3, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	inflight := Plan(r, w.cands(), "push", false, t0)[0].Name
	delete(w, inflight)                  // deleted in flight: kept until verify reports
	delete(w, "web-02")                  // deleted while pending: forgotten
	w["web-01"].Pod.UID = "uid-replaced" // replaced: a new pod of the same name
	w["web-09"] = &Candidate{Pod: events.PodRef{Namespace: "shop", Name: "web-09", UID: "uid-9"}, Ready: true, Why: "already running sha256:…"}
	Plan(r, w.cands(), "x", false, t0)
	if r.Pods[inflight] == nil {
		t.Error("in-flight pod forgotten")
	}
	if r.Pods["web-02"] != nil {
		t.Error("deleted pending pod still tracked")
	}
	if r.Pods["web-01"].UID != "uid-replaced" {
		t.Errorf("replaced pod has UID %s", r.Pods["web-01"].UID)
	}
	if p := r.Pods["web-09"]; p == nil || p.State != Current || p.Reason == "" {
		t.Errorf("new pod needing nothing: %+v", p)
	}
}

func TestIdleRolloutSettlesAtOnce(t *testing.T) {
	w := newWorld(2, 1)
	for _, c := range w {
		c.Containers, c.Why = nil, "already running"
	}
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	Plan(r, w.cands(), "push", false, t0)
	if !Settle(r, "push", t0) || !r.Idle() {
		t.Errorf("phase %s idle %v", r.Phase, r.Idle())
	}
}

// A pod deleted in flight is counted as deleted and the rollout goes on:
// its replacement (on the old image) is planned like any other pod, and a
// StatefulSet pod replaced under the same name is planned again.
func TestPodDeletedInFlightIsCountedAndTheRolloutGoesOn(t *testing.T) {
	w := newWorld(3, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	a := Plan(r, w.cands(), "push", false, t0)[0].Name
	o := outcome(r, a)
	delete(w, a)
	w["web-09"] = &Candidate{Pod: events.PodRef{Namespace: "shop", Name: "web-09", UID: "uid-9"}, Ready: true, Containers: plan()}
	o.Outcome, o.Reason, o.Message = events.OutcomeFailed, "PodDeleted", "pod shop/"+a+" is gone"
	Record(r, events.UpgradeFailed, o, "gone-"+a, t0)
	Record(r, events.UpgradeFailed, o, "gone-"+a+"-again", t0) // a duplicate changes nothing
	next := Plan(r, w.cands(), "gone-"+a, false, t0)
	if r.Phase != Running || len(next) != 1 {
		t.Fatalf("phase %s (%s), planned %v; want Running and the next pod planned", r.Phase, r.Reason, names(next))
	}
	if c := r.Counts(); c.Deleted != 1 || c.Failed != 0 || c.Pods != 4 {
		t.Errorf("counts %+v; want the deleted pod counted as deleted, not failed, and 4 pods", c)
	}
	// The StatefulSet case: the next pod is replaced under its own name.
	b := next[0].Name
	ob := outcome(r, b)
	w[b].Pod.UID = "uid-" + b + "-new"
	ob.Outcome, ob.Reason = events.OutcomeFailed, "PodReplaced"
	Record(r, events.UpgradeFailed, ob, "replaced-"+b, t0)
	again := Plan(r, w.cands(), "replaced-"+b, false, t0)
	if len(again) != 1 || again[0].Name != b || again[0].UID != "uid-"+b+"-new" {
		t.Fatalf("planned %+v; want the replacement %s planned under its new UID", again, b)
	}
	for step := 0; !Settle(r, fmt.Sprint(step), t0); step++ {
		var inflight string
		for name, p := range r.Pods {
			if p.State == InFlight {
				inflight = name
			}
		}
		if inflight == "" || step > 10 {
			t.Fatalf("stuck: %+v", r.Pods)
		}
		w[inflight].Containers = nil
		Record(r, events.UpgradeSucceeded, outcome(r, inflight), "ok-"+inflight, t0)
		Plan(r, w.cands(), "ok-"+inflight, false, t0)
	}
	if c := r.Counts(); c.Succeeded != 3 || c.Deleted != 2 || c.Pods != 5 {
		t.Errorf("final counts %+v; want 3 succeeded (web-09 and the replacement among them) and 2 deleted", c)
	}
}

// A restart moves no pod to other bytes: inplace undo looks past it, to
// the upgrade before.
func TestRestartIsNotUndone(t *testing.T) {
	now := time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)
	w := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	up := &Rollout{UpgradeID: "u-1", Workload: w, Phase: Completed, Pods: map[string]*Pod{
		"web-0": {Name: "web-0", UID: "a", State: Succeeded, UpgradeID: "u-1", Containers: []events.ContainerPlan{{
			Name: "app", FromImage: "r/shop:1.0", FromImageID: "r/shop@sha256:" + strings.Repeat("1", 64), ToImage: "r/shop:1.1"}}}}}
	r, err := BeginRequest(up, NewRestart("r-1", events.RestartRequestData{Target: w, Containers: []string{"app"}}), w, Options{Budget: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	r.Pods["web-0"] = &Pod{Name: "web-0", UID: "a", State: Succeeded, UpgradeID: "r-1",
		Containers: []events.ContainerPlan{{Name: "app", FromImage: "r/shop:1.1", ToImage: "r/shop@sha256:" + strings.Repeat("2", 64)}}}
	m, err := Undoable(r)
	if err != nil || m.UpgradeID != "u-1" || m.Back.Image != "r/shop:1.0" {
		t.Errorf("Undoable after a restart = %+v, %v; want the upgrade u-1, back to r/shop:1.0", m, err)
	}
}

// A pod without a gate is judged a success with no write to it, so verify
// may still roll it back (it crashed) before the success reaches the
// record. The record then says RolledBack and halts, whichever came first
// on the bus; an outcome of an earlier attempt (another patch time, before
// a resume) never undoes a later success.
func TestRollbackAfterTheSameAttemptsSuccess(t *testing.T) {
	w := newWorld(2, 1)
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	first := Plan(r, w.cands(), "push", false, t0)[0].Name
	ok := outcome(r, first)
	ok.PatchedAt = t0.Add(time.Second)
	Record(r, events.UpgradeSucceeded, ok, "ok-1", t0)
	if r.Pods[first].State != Succeeded {
		t.Fatalf("state %s after success", r.Pods[first].State)
	}
	stale := ok
	stale.Outcome, stale.Reason, stale.PatchedAt = events.OutcomeRolledBack, "CrashLoopBackOff", t0
	Record(r, events.UpgradeRolledBack, stale, "rb-earlier", t0)
	if r.Pods[first].State != Succeeded || r.Phase != Running {
		t.Fatalf("an earlier attempt's rollback changed the record: pod %s, rollout %s", r.Pods[first].State, r.Phase)
	}
	late := ok
	late.Outcome, late.Reason = events.OutcomeRolledBack, "CrashLoopBackOff"
	Record(r, events.UpgradeRolledBack, late, "rb-1", t0)
	if r.Pods[first].State != RolledBack || r.Phase != Halted || r.HaltedBy != "rb-1" {
		t.Fatalf("pod %s, rollout %s by %q; want RolledBack and halted by rb-1", r.Pods[first].State, r.Phase, r.HaltedBy)
	}
	Record(r, events.UpgradeSucceeded, ok, "ok-1-again", t0) // the success redelivered: no change
	if r.Pods[first].State != RolledBack {
		t.Errorf("a redelivered success undid the rollback: %s", r.Pods[first].State)
	}
}

// A late verify timer says "superseded" of an upgrade whose pod another
// upgrade took, and a pod.updated of a pod deleted after its success (no
// end written on it) says "deleted"; neither undoes the success the record
// holds for the same patch: the pod left, or moved on, after it ended.
func TestLaterNewsDoesNotUndoASuccess(t *testing.T) {
	for _, reason := range []string{"Superseded", "PodDeleted", "PodReplaced"} {
		t.Run(reason, func(t *testing.T) {
			w := newWorld(2, 1)
			r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
			first := Plan(r, w.cands(), "push", false, t0)[0].Name
			ok := outcome(r, first)
			ok.PatchedAt = t0.Add(time.Second)
			Record(r, events.UpgradeSucceeded, ok, "ok-1", t0)
			late := ok
			late.Outcome, late.Reason, late.Message = events.OutcomeFailed, reason, "later news"
			if p := Recordable(r, events.UpgradeFailed, late); p != nil {
				t.Errorf("%s is recordable over the success of pod %s", reason, p.Name)
			}
			Record(r, events.UpgradeFailed, late, "late-1", t0)
			if p := r.Pods[first]; p == nil || p.State != Succeeded || r.Phase != Running || len(r.Gone) != 0 {
				t.Errorf("pod %+v, rollout %s, gone %d after %s; want Succeeded and Running", p, r.Phase, len(r.Gone), reason)
			}
		})
	}
}
