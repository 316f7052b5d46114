package verify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	l := limits{verify: time.Minute, pullErrors: 10 * time.Second}
	patched := &inplace.State{UpgradeID: "u", Phase: inplace.PhasePatched, PatchedAt: t0,
		Containers: []inplace.ContainerState{{Name: "app"}}}
	rolling := &inplace.State{UpgradeID: "u", Phase: inplace.PhaseRollingBack, PatchedAt: t0, RollbackAt: t0.Add(time.Minute),
		Reason: "ImagePullBackOff", Message: "not found", Containers: []inplace.ContainerState{{Name: "app"}}}
	pod := runningSince(t0.Add(5 * time.Second))
	res := func(v inplace.Verdict, reason, msg string) inplace.Result {
		return inplace.Result{Verdict: v, Reason: reason, Message: msg}
	}
	tests := []struct {
		name   string
		st     *inplace.State
		r      inplace.Result
		at     time.Duration // after t0
		minRdy time.Duration
		want   decision
	}{
		{"succeeded", patched, res(inplace.Succeeded, "Updated", "ok"), 10 * time.Second, 0, decision{succeed, "Updated", "ok"}},
		{"succeeded, not running for min-ready yet", patched, res(inplace.Succeeded, "Updated", "ok"), 8 * time.Second, 5 * time.Second, decision{act: wait}},
		{"succeeded after min-ready", patched, res(inplace.Succeeded, "Updated", "ok"), 12 * time.Second, 5 * time.Second, decision{succeed, "Updated", "ok"}},
		{"back-off rolls back at once", patched, res(inplace.Failed, "ImagePullBackOff", "not found"), time.Second, 0, decision{rollback, "ImagePullBackOff", "not found"}},
		{"crash loop rolls back", patched, res(inplace.Failed, "CrashLoopBackOff", "exit 1"), time.Second, 0, decision{rollback, "CrashLoopBackOff", "exit 1"}},
		{"first ErrImagePull waits", patched, res(inplace.Failed, "ErrImagePull", "timeout"), 5 * time.Second, 0, decision{act: wait}},
		{"lasting ErrImagePull rolls back", patched, res(inplace.Failed, "ErrImagePull", "timeout"), 10 * time.Second, 0, decision{rollback, "ErrImagePull", "timeout"}},
		{"pod gone is reported", patched, res(inplace.Failed, inplace.ReasonPodDeleted, "gone"), time.Second, 0, decision{report, "PodDeleted", "gone"}},
		{"changed by others fails without rollback", patched, res(inplace.Failed, inplace.ReasonChangedByOthers, "set to x"), time.Second, 0, decision{fail, "ChangedByOthers", "set to x"}},
		{"in progress waits", patched, res(inplace.InProgress, "Restarting", "pulling"), 59 * time.Second, 0, decision{act: wait}},
		{"deadline rolls back", patched, res(inplace.InProgress, "Restarting", "pulling"), time.Minute, 0, decision{rollback, ReasonDeadline, "not done within 1m0s: pulling"}},
		{"rolled back", rolling, res(inplace.Succeeded, "RolledBack", "back"), 70 * time.Second, 0, decision{rolledBack, "ImagePullBackOff", "not found"}},
		{"rollback fails too", rolling, res(inplace.Failed, "CrashLoopBackOff", "exit 1"), 70 * time.Second, 0,
			decision{fail, ReasonRollbackFailed, "ImagePullBackOff: not found; the rollback failed too: exit 1"}},
		{"rollback ErrImagePull waits", rolling, res(inplace.Failed, "ErrImagePull", "timeout"), 65 * time.Second, 0, decision{act: wait}},
		{"pod gone while rolling back", rolling, res(inplace.Failed, inplace.ReasonPodDeleted, "gone"), 70 * time.Second, 0,
			decision{report, "PodDeleted", "ImagePullBackOff: not found; then, rolling back: gone"}},
		{"rollback in progress waits", rolling, res(inplace.InProgress, "Restarting", "starting"), 119 * time.Second, 0, decision{act: wait}},
		{"rollback deadline fails", rolling, res(inplace.InProgress, "Restarting", "starting"), 2 * time.Minute, 0,
			decision{fail, ReasonRollbackTimeout, "ImagePullBackOff: not found; the rollback was not done within 1m0s: starting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := l
			lim.minReady = tt.minRdy
			got := decide(pod, tt.st, tt.r, t0.Add(tt.at), lim)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func runningSince(at time.Time) *corev1.Pod {
	return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}}}}}
}

// A rollback gets at least rollbackMin, however short verify is: the
// kubelet acts on it only once it is done with the upgrade's own pull.
func TestDecideRollbackMin(t *testing.T) {
	l := limits{verify: time.Second, pullErrors: 10 * time.Second, rollbackMin: 2 * time.Minute}
	rolling := &inplace.State{UpgradeID: "u", Phase: inplace.PhaseRollingBack, PatchedAt: t0, RollbackAt: t0.Add(time.Second),
		Reason: ReasonDeadline, Message: "slow", Containers: []inplace.ContainerState{{Name: "app"}}}
	pulling := inplace.Result{Verdict: inplace.InProgress, Reason: "Restarting", Message: "pulling"}
	pod := runningSince(t0)
	if got := decide(pod, rolling, pulling, t0.Add(time.Minute), l); got.act != wait {
		t.Errorf("a minute into the rollback: %+v, want wait", got)
	}
	got := decide(pod, rolling, pulling, t0.Add(2*time.Minute+time.Second), l)
	want := decision{fail, ReasonRollbackTimeout, "Deadline: slow; the rollback was not done within 2m0s: pulling"}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(decision{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// nextLook: the timer comes back at the next time-bound decision only.
func TestNextLook(t *testing.T) {
	l := limits{verify: time.Minute, pullErrors: 10 * time.Second, minReady: 5 * time.Second, rollbackMin: 2 * time.Minute}
	patched := &inplace.State{UpgradeID: "u", Phase: inplace.PhasePatched, PatchedAt: t0,
		Containers: []inplace.ContainerState{{Name: "app"}}}
	rolling := &inplace.State{UpgradeID: "u", Phase: inplace.PhaseRollingBack, PatchedAt: t0, RollbackAt: t0.Add(time.Minute),
		Containers: []inplace.ContainerState{{Name: "app"}}}
	pod := runningSince(t0.Add(5 * time.Second))
	res := func(v inplace.Verdict, reason string) inplace.Result {
		return inplace.Result{Verdict: v, Reason: reason}
	}
	tests := []struct {
		name string
		st   *inplace.State
		r    inplace.Result
		at   time.Duration // after t0
		want time.Duration
	}{
		{"restarting: the verify deadline", patched, res(inplace.InProgress, inplace.ReasonRestarting), 2 * time.Second, 58 * time.Second},
		{"ErrImagePull: its allowance", patched, res(inplace.Failed, "ErrImagePull"), 2 * time.Second, 8 * time.Second},
		{"ready, min-ready to go (startedAt has second precision)", patched, res(inplace.Succeeded, inplace.ReasonUpdated), 6 * time.Second, 5 * time.Second},
		{"rolling back: the rollback deadline", rolling, res(inplace.InProgress, inplace.ReasonRestarting), 70 * time.Second, 110 * time.Second},
		{"past every bound", patched, res(inplace.InProgress, inplace.ReasonRestarting), 2 * time.Minute, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextLook(pod, tt.st, tt.r, t0.Add(tt.at), l); got != tt.want {
				t.Errorf("nextLook = %s, want %s", got, tt.want)
			}
		})
	}
}
