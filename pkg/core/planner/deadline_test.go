package planner

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// CheckPod's deadlines, one case per way a pod in flight can stand.
func TestCheckPod(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w := Watchdog{Slack: 10 * time.Second, NudgeEvery: 30 * time.Second, Nudges: 2, PrepullTimeout: time.Minute, VerifySeconds: 60}
	r := &rollout.Rollout{UpgradeID: "u-2", Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Options: rollout.Options{GraceSeconds: 5}, StartedAt: t0}
	pod := func(st *inplace.State) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "uid-0"}}
		if st != nil {
			p.Annotations = map[string]string{inplace.StateAnnotation: st.Encode()}
		}
		return p
	}
	planned := &rollout.Pod{Name: "web-0", UID: "uid-0", State: rollout.InFlight, UpgradeID: "u-2", PlannedAt: t0}
	older := &rollout.Pod{Name: "web-0", UID: "uid-0", State: rollout.InFlight, UpgradeID: "u-1", PlannedAt: t0}
	patched := &inplace.State{UpgradeID: "u-2", Phase: inplace.PhasePatched, PatchedAt: t0, MinReadySeconds: 20}
	rolling := &inplace.State{UpgradeID: "u-2", Phase: inplace.PhaseRollingBack, PatchedAt: t0, RollbackAt: t0.Add(time.Minute)}
	tests := []struct {
		name  string
		p     *rollout.Pod
		pod   *corev1.Pod
		after time.Duration
		want  CheckKind
		nudge int
	}{
		{"gone", planned, nil, 0, Gone, 0},
		{"replaced", planned, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-new"}}, 0, Gone, 0},
		{"ended, outcome lost", planned, pod(&inplace.State{UpgradeID: "u-2", Phase: inplace.PhaseRolledBack}), 0, Ended, 0},
		// planned: grace 5s + pre-pull 1m + slack 10s = 75s.
		{"planned, on time", planned, pod(nil), 74 * time.Second, OnTime, 0},
		{"planned, late", planned, pod(nil), 76 * time.Second, LateDispatch, 0},
		{"planned, reminded once", planned, pod(nil), 106 * time.Second, LateDispatch, 1},
		{"planned, given up", planned, pod(nil), 136 * time.Second, Expired, 0},
		{"an older upgrade's plan is not reminded", older, pod(nil), 76 * time.Second, Expired, 0},
		// patched: verify 60s + minReady 20s + slack 10s = 90s from the patch.
		{"patched, on time", planned, pod(patched), 89 * time.Second, OnTime, 0},
		{"patched, late", planned, pod(patched), 91 * time.Second, LateVerify, 0},
		// rolling back: 70s from the rollback, not from the patch.
		{"rolling back, on time", planned, pod(rolling), 129 * time.Second, OnTime, 0},
		{"rolling back, late", planned, pod(rolling), 131 * time.Second, LateVerify, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CheckPod(r, tt.p, tt.pod, t0.Add(tt.after), w)
			if c.Kind != tt.want || c.Nudge != tt.nudge {
				t.Errorf("kind %d nudge %d; want %d %d (%+v)", c.Kind, c.Nudge, tt.want, tt.nudge, c.Outcome)
			}
			if c.Kind == Expired && c.Outcome.Reason != ReasonDeadline {
				t.Errorf("expired with reason %q", c.Outcome.Reason)
			}
		})
	}
}
