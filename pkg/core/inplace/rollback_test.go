package inplace

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

var t1 = t0.Add(90 * time.Second)

// failedPod: proxy moved to the new image, app cannot pull it.
func failedPod(t *testing.T) (*corev1.Pod, *State) {
	t.Helper()
	pod, st := patchedWith(t, webPlan())
	setStatus(pod, running("proxy", "docker.io/library/nginx:1.25.1", "docker.io/library/nginx@"+dgNew, "containerd://proxy-2", 1))
	setStatus(pod, waiting("app", "docker.io/library/nginx@"+dgOld, "containerd://app-1", 0, "ImagePullBackOff", "Back-off pulling image"))
	pod.ResourceVersion = "120"
	return pod, st
}

// rolledBack applies the rollback patch to pod; the kubelet has observed it
// and not acted yet.
func rolledBack(t *testing.T, pod *corev1.Pod, st *State) (*corev1.Pod, *State) {
	t.Helper()
	patch, err := RollbackPatch(pod, st, "ImagePullBackOff", t1)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	got.Generation, got.Status.ObservedGeneration = 3, 3
	next, err := ParseState(&got)
	if err != nil {
		t.Fatal(err)
	}
	return &got, next
}

func TestRollbackPatch(t *testing.T) {
	pod, st := failedPod(t)
	patch, err := RollbackPatch(pod, st, "ImagePullBackOff", t1)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "rollback_web", patch)
	got, next := rolledBack(t, pod, st)
	wantImages := map[string]string{"init-db": "nginx:1.24.0", "proxy": "docker.io/library/nginx:1.24.0",
		"app": "nginx:1.24.0", "metrics": "prom/statsd-exporter:v0.26.0"}
	if diff := cmp.Diff(wantImages, TemplateImages(got.Spec)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	want := wantPatchedState()
	want.Phase, want.Reason, want.RollbackAt = PhaseRollingBack, "ImagePullBackOff", t1
	want.Containers[0].RollbackContainerID, want.Containers[0].RollbackRestartCount = "containerd://proxy-2", 1
	want.Containers[1].RollbackContainerID = "containerd://app-1"
	if diff := cmp.Diff(want, next); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

func TestRollbackPatchRefuses(t *testing.T) {
	tests := []struct {
		name      string
		change    func(*corev1.Pod, **State)
		permanent bool
		is        error
		msg       string
	}{
		{name: "no state", change: func(_ *corev1.Pod, st **State) { *st = nil }, permanent: true, msg: "has no " + StateAnnotation},
		{name: "already rolling back", change: func(_ *corev1.Pod, st **State) { (*st).Phase = PhaseRollingBack }, is: ErrAlreadyApplied},
		{name: "third party image", change: func(p *corev1.Pod, _ **State) { p.Spec.Containers[0].Image = "nginx:9" }, permanent: true,
			msg: `container "app" is set to nginx:9, neither nginx:1.25.1@` + dgNew + " nor nginx:1.24.0 (changed by someone else)"},
		{name: "container gone", change: func(p *corev1.Pod, _ **State) { p.Spec.Containers = p.Spec.Containers[1:] }, permanent: true,
			msg: `container "app" is gone`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := failedPod(t)
			tt.change(pod, &st)
			_, err := RollbackPatch(pod, st, "x", t1)
			if err == nil {
				t.Fatal("RollbackPatch accepted it")
			}
			if got := errors.Is(err, settle.ErrPermanent); got != tt.permanent {
				t.Errorf("permanent = %v; want %v (%v)", got, tt.permanent, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

// TestRollbackPatchPreconditions: the API server refuses the rollback when
// the image or the state changed after the read.
func TestRollbackPatchPreconditions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*corev1.Pod)
	}{
		{"image changed by a third party", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:9" }},
		{"state rewritten meanwhile", func(p *corev1.Pod) {
			p.Annotations[StateAnnotation] = State{UpgradeID: "up-2", Phase: PhasePatched}.Encode()
		}},
		{"pod replaced", func(p *corev1.Pod) { p.UID = "uid-2" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := failedPod(t)
			patch, err := RollbackPatch(pod, st, "x", t1)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(pod)
			var got corev1.Pod
			if err := apply(t, pod, patch, &got); err == nil || !strings.Contains(err.Error(), "test") {
				t.Errorf("apply error = %v; want a failed test operation", err)
			}
		})
	}
}

func TestRollbackProgress(t *testing.T) {
	oldID := "docker.io/library/nginx@" + dgOld
	back := func(p *corev1.Pod) {
		setStatus(p, running("proxy", "docker.io/library/nginx:1.24.0", oldID, "containerd://proxy-3", 2))
		setStatus(p, running("app", "docker.io/library/nginx:1.24.0", oldID, "containerd://app-2", 1))
	}
	tests := []struct {
		name     string
		untouchd bool
		change   func(*corev1.Pod)
		want     Result
	}{
		{name: "not restarted yet", change: func(*corev1.Pod) {},
			want: Result{InProgress, ReasonRestarting, "container proxy has not restarted for the rollback yet", nil}},
		{name: "not observed", change: func(p *corev1.Pod) { p.Status.ObservedGeneration = 2 },
			want: Result{InProgress, ReasonNotObserved, "the kubelet has observed generation 2 of 3", nil}},
		{name: "back on the previous image", change: back,
			want: Result{Succeeded, ReasonRolledBack, "every container runs its previous image again and is ready", nil}},
		{name: "kubelet never acted on the upgrade", untouchd: true, change: func(*corev1.Pod) {},
			want: Result{Succeeded, ReasonRolledBack, "every container runs its previous image again and is ready", nil}},
		// The real kubelet writes no status while it pulls: a rollback
		// written then is acted on after the upgrade's own restart.
		{name: "kubelet was mid-upgrade: restarted for it, then for the rollback", untouchd: true, change: func(p *corev1.Pod) {
			setStatus(p, running("proxy", "docker.io/library/nginx:1.24.0", oldID, "containerd://proxy-3", 2))
			setStatus(p, running("app", "docker.io/library/nginx:1.24.0", oldID, "containerd://app-3", 2))
		}, want: Result{Succeeded, ReasonRolledBack, "every container runs its previous image again and is ready", nil}},
		{name: "mid-upgrade, then a crash", untouchd: true, change: func(p *corev1.Pod) {
			crashed := running("proxy", "docker.io/library/nginx:1.24.0", oldID, "containerd://proxy-4", 3)
			crashed.Ready = false
			setStatus(p, crashed)
		}, want: Result{Failed, ReasonCrashLoop, "container proxy restarted 3 times since the patch", nil}},
		// The kubelet's reason cache lags one sync: its first status after
		// the rollback still has the target's pull error.
		{name: "the target's pull error, shown once more", change: func(p *corev1.Pod) {
			back(p)
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "ImagePullBackOff",
				`Back-off pulling image "nginx:1.25.1@`+dgNew+`": ErrImagePull: not found`))
		}, want: Result{InProgress, "ImagePullBackOff", `container app: ImagePullBackOff: Back-off pulling image "nginx:1.25.1@` + dgNew + `": ErrImagePull: not found`, nil}},
		{name: "the previous image's pull error", change: func(p *corev1.Pod) {
			back(p)
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "ImagePullBackOff", `Back-off pulling image "nginx:1.24.0": ErrImagePull: not found`))
		}, want: Result{Failed, "ImagePullBackOff", `the previous image cannot run either: container app: ImagePullBackOff: Back-off pulling image "nginx:1.24.0": ErrImagePull: not found`, nil}},
		{name: "not ready", change: func(p *corev1.Pod) { back(p); p.Status.ContainerStatuses[0].Ready = false },
			want: Result{InProgress, ReasonNotReady, "container app runs nginx:1.24.0 again but is not ready", nil}},
		{name: "previous image cannot be pulled either", change: func(p *corev1.Pod) {
			back(p)
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "ErrImagePull", "manifest unknown"))
		}, want: Result{Failed, "ErrImagePull", "the previous image cannot run either: container app: ErrImagePull: manifest unknown", nil}},
		{name: "changed by others", change: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:9" },
			want: Result{Failed, ReasonChangedByOthers, "container app is set to nginx:9, not nginx:1.24.0", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := failedPod(t)
			if tt.untouchd {
				pod, st = patchedWith(t, webPlan())
			}
			pod, st = rolledBack(t, pod, st)
			tt.change(pod)
			got := RollbackProgress(pod, st)
			got.Containers = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishPatch(t *testing.T) {
	pod, st := patchedWith(t, webPlan())
	upgraded(pod)
	patch, err := FinishPatch(pod, *st, PhaseSucceeded, ReasonUpdated, t1)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	next, _ := ParseState(&got)
	want := wantPatchedState()
	want.Phase, want.Reason, want.FinishedAt = PhaseSucceeded, ReasonUpdated, t1
	if diff := cmp.Diff(want, next); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if _, err := FinishPatch(&got, *next, PhaseSucceeded, ReasonUpdated, t1); !errors.Is(err, ErrAlreadyApplied) {
		t.Errorf("second FinishPatch error = %v; want ErrAlreadyApplied", err)
	}
	if _, err := FinishPatch(webPod(), *st, PhaseFailed, "x", t1); !errors.Is(err, settle.ErrPermanent) {
		t.Errorf("FinishPatch without annotation error = %v; want permanent", err)
	}
}
