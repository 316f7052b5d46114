package guard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

const (
	from = "r.example/shop/web:1.2.0"
	to   = "r.example/shop/web:1.3.0@sha256:3333333333333333333333333333333333333333333333333333333333333333"
	d12  = "sha256:1212121212121212121212121212121212121212121212121212121212121212"
)

var owner = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "dep-1"}

func pod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "pod-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: from}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Image: from, ImageID: "r.example/shop/web@" + d12}}},
	}
}

func record() *rollout.Rollout {
	push := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "r.example", Repository: "shop/web", Tag: "1.3.0",
		Digest: "sha256:3333333333333333333333333333333333333333333333333333333333333333", Origin: "test"}}
	return &rollout.Rollout{UpgradeID: "u-1", Workload: owner, Push: push, Phase: rollout.Running,
		Pods: map[string]*rollout.Pod{"web-1": {Name: "web-1", UID: "pod-1", State: rollout.InFlight, UpgradeID: "u-1",
			Containers: []events.ContainerPlan{{Name: "app", FromImage: from, ToImage: to}}}}}
}

func plan() events.Plan {
	r := record()
	return events.Plan{UpgradeID: "u-1", Pod: events.PodRef{Namespace: "shop", Name: "web-1", UID: "pod-1"}, Owner: owner,
		Containers: []events.ContainerPlan{{Name: "app", FromImage: from, ToImage: to}}, Target: r.Target()}
}

func workload(policyValue string) kube.Workload {
	w := kube.Workload{Ref: owner, Meta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "dep-1"}}
	if policyValue != "" {
		w.Meta.Annotations = map[string]string{"inplace.dev/policy": policyValue}
	}
	return w
}

// check runs the pure checks of Guard.Plan in its order.
func check(w kube.Workload, r *rollout.Rollout, p *corev1.Pod, pl events.Plan) *Refusal {
	rp, refusal := inFlight(r, r.Pods[p.Name], w.Ref, p, pl.UpgradeID)
	if refusal != nil {
		return refusal
	}
	if refusal := matchPlan(r, rp, pl); refusal != nil {
		return refusal
	}
	return allowed(w, p, pl.Containers, undoing(&checked{owner: w, record: r, pod: rp}))
}

func TestPlanChecks(t *testing.T) {
	tests := []struct {
		name      string
		policy    string
		change    func(r *rollout.Rollout, p *corev1.Pod, pl *events.Plan)
		reason    string
		withdrawn bool
	}{
		{name: "the recorded plan, allowed", policy: "semver:minor"},
		{name: "another target", policy: "force", change: func(_ *rollout.Rollout, _ *corev1.Pod, pl *events.Plan) {
			pl.Containers[0].ToImage = "evil.example/x:6.6.6"
		}, reason: ReasonNotThePlan},
		{name: "another upgrade", policy: "force", change: func(_ *rollout.Rollout, _ *corev1.Pod, pl *events.Plan) {
			pl.UpgradeID = "u-forged"
		}, reason: ReasonNotPlanned},
		{name: "pod not in the record", policy: "force", change: func(r *rollout.Rollout, _ *corev1.Pod, _ *events.Plan) {
			delete(r.Pods, "web-1")
		}, reason: ReasonNotPlanned},
		{name: "pod replaced", policy: "force", change: func(_ *rollout.Rollout, p *corev1.Pod, _ *events.Plan) {
			p.UID = "pod-2"
		}, reason: ReasonNotPlanned},
		{name: "pod already done", policy: "force", change: func(r *rollout.Rollout, _ *corev1.Pod, _ *events.Plan) {
			r.Pods["web-1"].State = rollout.Succeeded
		}, reason: ReasonNotPlanned},
		{name: "record of another incarnation", policy: "force", change: func(r *rollout.Rollout, _ *corev1.Pod, _ *events.Plan) {
			r.Workload.UID = "dep-0"
		}, reason: ReasonNotPlanned},
		{name: "another plan target string", policy: "force", change: func(_ *rollout.Rollout, _ *corev1.Pod, pl *events.Plan) {
			pl.Target = "r.example/shop/web:9.9.9"
		}, reason: ReasonNotThePlan},
		{name: "an extra container", policy: "force", change: func(_ *rollout.Rollout, _ *corev1.Pod, pl *events.Plan) {
			pl.Containers = append(pl.Containers, events.ContainerPlan{Name: "side", FromImage: "a:1", ToImage: "a:2"})
		}, reason: ReasonNotThePlan},
		{name: "not opted in any more", change: nil, reason: ReasonNotOptedIn, withdrawn: true},
		{name: "policy changed", policy: "semver:patch", reason: ReasonPolicyRefuses, withdrawn: true},
		{name: "recorded repository mismatch", policy: "force", change: func(r *rollout.Rollout, _ *corev1.Pod, pl *events.Plan) {
			r.Pods["web-1"].Containers[0].ToImage = "evil.example/x:6.6.6"
			pl.Containers[0].ToImage = "evil.example/x:6.6.6"
		}, reason: ReasonNotThePlan},
		{name: "carried from a superseded upgrade", policy: "force", change: func(r *rollout.Rollout, _ *corev1.Pod, _ *events.Plan) {
			r.UpgradeID, r.Push.Tag = "u-2", "1.4.0"
		}},
		{name: "already on the target", policy: "semver:minor", change: func(_ *rollout.Rollout, p *corev1.Pod, _ *events.Plan) {
			p.Spec.Containers[0].Image = to
			p.Status.ContainerStatuses[0].ImageID = "r.example/shop/web@sha256:3333333333333333333333333333333333333333333333333333333333333333"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, p, pl := record(), pod(), plan()
			if tt.change != nil {
				tt.change(r, p, &pl)
			}
			got := check(workload(tt.policy), r, p, pl)
			switch {
			case tt.reason == "" && got != nil:
				t.Fatalf("refused: %v", got)
			case tt.reason == "":
			case got == nil:
				t.Fatalf("allowed; want refused %s", tt.reason)
			case got.Reason != tt.reason || got.Withdrawn != tt.withdrawn:
				t.Errorf("refused %s (withdrawn %v): %s; want %s (withdrawn %v)", got.Reason, got.Withdrawn, got.Message, tt.reason, tt.withdrawn)
			}
		})
	}
}

// A plan down a version the policy refuses is allowed only when the
// record is of an undo compute-spec accepted, and the pod is in flight
// under it.
func TestUndoPlanChecks(t *testing.T) {
	down := func(undo string, carried bool) (*rollout.Rollout, *corev1.Pod, events.Plan) {
		r, p, pl := record(), pod(), plan()
		r.Push.Tag, r.Push.Digest, r.Push.Undo = "1.2.0", d12, undo
		back := []events.ContainerPlan{{Name: "app", FromImage: to, ToImage: "r.example/shop/web:1.2.0@" + d12}}
		r.Pods["web-1"].Containers, pl.Containers, pl.Target = back, back, r.Target()
		p.Spec.Containers[0].Image = to
		p.Status.ContainerStatuses[0].ImageID = "r.example/shop/web@sha256:3333333333333333333333333333333333333333333333333333333333333333"
		if carried {
			r.UpgradeID = "u-2"
		}
		return r, p, pl
	}
	for _, tc := range []struct {
		name    string
		undo    string
		carried bool
		reason  string
	}{
		{name: "an undo", undo: "u-0"},
		{name: "a downgrade that is no undo", reason: ReasonPolicyRefuses},
		{name: "planned before the undo superseded its upgrade", undo: "u-0", carried: true, reason: ReasonPolicyRefuses},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, p, pl := down(tc.undo, tc.carried)
			got := check(workload("semver:minor"), r, p, pl)
			switch {
			case tc.reason == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tc.reason != "" && (got == nil || got.Reason != tc.reason):
				t.Errorf("got %v; want refused %s", got, tc.reason)
			}
		})
	}
}

func TestStateChecks(t *testing.T) {
	state := func() *inplace.State {
		return &inplace.State{UpgradeID: "u-1", Phase: inplace.PhasePatched,
			Containers: []inplace.ContainerState{{Name: "app", PreviousImage: from, PreviousImageID: "r.example/shop/web@" + d12, TargetImage: to}}}
	}
	tests := []struct {
		name   string
		change func(st *inplace.State)
		reason string
	}{
		{name: "the recorded upgrade"},
		{name: "tampered previous image: the record's is used", change: func(st *inplace.State) {
			st.Containers[0].PreviousImage, st.Containers[0].PreviousImageID = "evil.example/x:6.6.6", "evil.example/x@"+d12
		}},
		{name: "tampered target", change: func(st *inplace.State) {
			st.Containers[0].TargetImage = "evil.example/x:6.6.6"
		}, reason: ReasonNotThePlan},
		{name: "a container never planned", change: func(st *inplace.State) {
			st.Containers = append(st.Containers, inplace.ContainerState{Name: "side", PreviousImage: "a:1", TargetImage: "a:2"})
		}, reason: ReasonNotThePlan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := state()
			if tt.change != nil {
				tt.change(st)
			}
			r := record()
			r.Pods["web-1"].Containers[0].FromImageID = "r.example/shop/web@" + d12
			rp, refusal := inFlight(r, r.Pods["web-1"], owner, pod(), st.UpgradeID)
			var got *inplace.State
			if refusal == nil {
				got, refusal = recordedState(rp, st)
			}
			switch {
			case tt.reason == "" && refusal != nil:
				t.Fatalf("refused: %v", refusal)
			case tt.reason != "" && (refusal == nil || refusal.Reason != tt.reason || refusal.Withdrawn):
				t.Errorf("got %v; want a forged refusal %s", refusal, tt.reason)
			case tt.reason == "":
				if diff := cmp.Diff(state(), got); diff != "" {
					t.Errorf("the state as recorded (-want +got):\n%s", diff)
				}
			}
		})
	}
}
