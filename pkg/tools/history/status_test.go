package history

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

func sampleRollout(name string, phase rollout.Phase, states ...rollout.PodState) rollout.Rollout {
	r := rollout.Rollout{
		UpgradeID: "u-" + name, Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: name},
		Push:  events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "registry.example", Repository: "shop/" + name, Tag: "1.3.0", Origin: "distribution"}},
		Phase: phase, Pods: map[string]*rollout.Pod{}, Wave: 2,
		StartedAt: t0, UpdatedAt: t0.Add(time.Minute),
	}
	for i, s := range states {
		n := name + "-" + string(rune('a'+i))
		r.Pods[n] = &rollout.Pod{Name: n, State: s}
	}
	return r
}

func TestSummarize(t *testing.T) {
	r := sampleRollout("web", rollout.Halted, rollout.Succeeded, rollout.Succeeded, rollout.Current,
		rollout.InFlight, rollout.Pending, rollout.Failed, rollout.RolledBack)
	r.Reason, r.Message = "ImagePullBackOff", "shop/web-g: Back-off pulling image"
	want := Summary{Workload: "Deployment/shop/web", UpgradeID: "u-web", Phase: rollout.Halted,
		Target: "registry.example/shop/web:1.3.0", Wave: 2, Pods: 7, Succeeded: 2, Current: 1, InFlight: 1,
		Pending: 1, Failed: 1, RolledBack: 1, Reason: "ImagePullBackOff", Message: "shop/web-g: Back-off pulling image",
		StartedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	got := Summarize(r)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.Done() != 3 {
		t.Errorf("Done = %d; want succeeded + current = 3", got.Done())
	}
}

// A completed rollout says what became of the template, and counts the pods
// deleted in flight.
func TestSummarizeTemplateAndDeleted(t *testing.T) {
	r := sampleRollout("web", rollout.Completed, rollout.Succeeded, rollout.Succeeded)
	r.Gone = []*rollout.Pod{{Name: "web-x", State: rollout.Deleted}, {Name: "web-y", State: rollout.Succeeded}}
	r.Sync = &rollout.Sync{Step: "done", Result: events.TemplateLeftToGitOps, Reason: "ManagedByArgoCD", Note: "write app=… in Git"}
	got := Summarize(r)
	if got.Pods != 4 || got.Succeeded != 3 || got.Deleted != 1 || got.Done() != 3 {
		t.Errorf("counts %+v", got)
	}
	if got.Template != events.TemplateLeftToGitOps || got.TemplateReason != "ManagedByArgoCD" ||
		got.Reason != "TemplateLeftToGitOps" || got.Message != "write app=… in Git" {
		t.Errorf("template %q %q, reason %q %q", got.Template, got.TemplateReason, got.Reason, got.Message)
	}
}

func TestSelectStatus(t *testing.T) {
	now := t0.Add(3 * time.Hour)
	at := func(name string, phase rollout.Phase, updated time.Duration) Summary {
		return Summary{Workload: name, Phase: phase, UpdatedAt: now.Add(-updated)}
	}
	in := []Summary{
		at("done-old", rollout.Completed, 2*time.Hour),
		at("done-new", rollout.Completed, 10*time.Minute),
		at("running-old", rollout.Running, 2*time.Hour),
		at("halted-new", rollout.Halted, time.Minute),
	}
	names := func(s []Summary) []string {
		var out []string
		for _, x := range s {
			out = append(out, x.Workload)
		}
		return out
	}
	if diff := cmp.Diff([]string{"halted-new", "running-old", "done-new"}, names(SelectStatus(in, false, time.Hour, now))); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"halted-new", "running-old", "done-new", "done-old"}, names(SelectStatus(in, true, time.Hour, now))); diff != "" {
		t.Errorf("all (-want +got):\n%s", diff)
	}
}

func TestBar(t *testing.T) {
	tests := []struct {
		done, total int
		want        string
	}{
		{7, 10, "[#######---] 7/10"},
		{0, 10, "[----------] 0/10"},
		{3, 3, "[##########] 3/3"},
		{1, 3, "[###-------] 1/3"},
		{0, 0, "[----------] 0/0"},
		{300, 300, "[##########] 300/300"},
	}
	for _, tt := range tests {
		if got := Bar(tt.done, tt.total, 10); got != tt.want {
			t.Errorf("Bar(%d, %d) = %q; want %q", tt.done, tt.total, got, tt.want)
		}
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {45 * time.Second, "45s"}, {12*time.Minute + 30*time.Second, "12m"},
		{3 * time.Hour, "3h"}, {47 * time.Hour, "47h"}, {72 * time.Hour, "3d"},
	}
	for _, tt := range tests {
		if got := Age(tt.d); got != tt.want {
			t.Errorf("Age(%s) = %s; want %s", tt.d, got, tt.want)
		}
	}
}

func TestWriteStatus(t *testing.T) {
	halted := sampleRollout("web", rollout.Halted, rollout.Succeeded, rollout.Succeeded, rollout.RolledBack)
	halted.Reason, halted.Message = "ImagePullBackOff", "shop/web-c: Back-off pulling image"
	running := sampleRollout("api", rollout.Running, rollout.Succeeded, rollout.InFlight, rollout.Pending, rollout.Pending)
	unsynced := sampleRollout("cart", rollout.Completed, rollout.Succeeded, rollout.Succeeded)
	unsynced.Gone = []*rollout.Pod{{Name: "cart-x", State: rollout.Deleted, Reason: "PodDeleted"}}
	unsynced.Sync = &rollout.Sync{Step: "done", Result: events.TemplateNotSynced, Reason: "RolloutUnderWay",
		Note: "template left as is: the Deployment has 2 active ReplicaSets"}
	var b bytes.Buffer
	rows := []Summary{Summarize(halted), Summarize(running), Summarize(unsynced)}
	if err := WriteStatus(&b, rows, t0.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	golden(t, "status_want.txt", b.String())
}

// A finished restart request leaves the default listing after its
// ttlSecondsAfterFinished, and shows its request id and target.
func TestRestartStatusTTL(t *testing.T) {
	now := t0.Add(time.Hour)
	r := rollout.Rollout{UpgradeID: "r-1-2", Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Phase: rollout.Completed, UpdatedAt: now.Add(-2 * time.Minute),
		Restart: &rollout.Restart{RequestID: "r-1", Containers: []string{"app"}, FinishedAt: now.Add(-2 * time.Minute),
			Strategy: events.RestartStrategy{TTLSecondsAfterFinished: 60}}}
	s := Summarize(r)
	if s.UpgradeID != "r-1" || s.Target != "restart app" {
		t.Errorf("summary %s %q; want r-1, restart app", s.UpgradeID, s.Target)
	}
	if got := SelectStatus([]Summary{s}, false, time.Hour, now); len(got) != 0 {
		t.Errorf("listed past its TTL: %+v", got)
	}
	if got := SelectStatus([]Summary{s}, true, time.Hour, now); len(got) != 1 {
		t.Errorf("--all: %d rows; want 1", len(got))
	}
	r.Restart.Strategy.TTLSecondsAfterFinished = 600
	if got := SelectStatus([]Summary{Summarize(r)}, false, time.Hour, now); len(got) != 1 {
		t.Errorf("within its TTL: %d rows; want 1", len(got))
	}
}

// A resize request shows as its request id, what it asks, and why it
// stopped.
func TestResizeStatus(t *testing.T) {
	r := rollout.Rollout{UpgradeID: "z-1", Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Phase: rollout.Halted, Reason: "Infeasible", Message: "shop/web-1: Node didn't have enough capacity: cpu",
		Resize: &rollout.Resize{RequestID: "z-1", Containers: []string{"app"}, CPU: "500m", Memory: "256Mi"},
		Pods:   map[string]*rollout.Pod{"web-1": {Name: "web-1", State: rollout.RolledBack}}}
	s := Summarize(r)
	if s.UpgradeID != "z-1" || s.Target != "resize app cpu 500m memory 256Mi" || s.Reason != "Infeasible" || s.RolledBack != 1 {
		t.Errorf("summary %+v; want z-1, resize app cpu 500m memory 256Mi, Infeasible, 1 rolled back", s)
	}
}
