package inplace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

// patchedWith is webPod after plan's patch was applied, generation bumped
// and observed by the kubelet, which has not restarted anything yet.
func patchedWith(t *testing.T, plan events.Plan) (*corev1.Pod, *State) {
	t.Helper()
	pod := webPod()
	patch, err := Patch(pod, plan, t0)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	got.Generation, got.Status.ObservedGeneration = 2, 2
	st, err := ParseState(&got)
	if err != nil {
		t.Fatal(err)
	}
	return &got, st
}

// setStatus replaces the status of the named container.
func setStatus(p *corev1.Pod, cs corev1.ContainerStatus) {
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == cs.Name {
				list[i] = cs
			}
		}
	}
}

func waiting(name, imageID, containerID string, restarts int32, reason, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "docker.io/library/nginx:1.24.0", ImageID: imageID, ContainerID: containerID,
		RestartCount: restarts, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
}

// upgraded: both planned containers restarted onto the new digest.
func upgraded(p *corev1.Pod) {
	setStatus(p, running("proxy", "docker.io/library/nginx:1.25.1", "docker.io/library/nginx@"+dgNew, "containerd://proxy-2", 1))
	setStatus(p, running("app", "docker.io/library/nginx:1.25.1", "docker.io/library/nginx@"+dgNew, "containerd://app-2", 1))
}

func tagOnlyPlan() events.Plan {
	plan := webPlan()
	plan.Target = "docker.io/library/nginx:1.25.1"
	for i := range plan.Containers {
		plan.Containers[i].ToImage = nameAsWritten(plan.Containers[i].ToImage) + ":1.25.1"
		plan.Containers[i].ToDigest = ""
	}
	return plan
}

func TestProgress(t *testing.T) {
	oldID, pullMsg := "docker.io/library/nginx@"+dgOld, `failed to pull and unpack image "docker.io/library/nginx:1.25.1": not found`
	deleting := metav1.NewTime(t0)
	tests := []struct {
		name   string
		plan   func() events.Plan
		change func(p *corev1.Pod, st **State)
		want   Result
	}{
		{name: "not yet observed generation", change: func(p *corev1.Pod, _ **State) { p.Status.ObservedGeneration = 1 },
			want: Result{InProgress, ReasonNotObserved, "the kubelet has observed generation 1 of 2", nil}},
		{name: "observed, not restarted yet", change: func(*corev1.Pod, **State) {},
			want: Result{InProgress, ReasonRestarting, "container proxy has not restarted yet", nil}},
		{name: "pulling", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "ContainerCreating", ""))
		}, want: Result{InProgress, "ContainerCreating", "container app: ContainerCreating", nil}},
		{name: "ErrImagePull with message", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "ErrImagePull", pullMsg))
		}, want: Result{Failed, "ErrImagePull", "container app: ErrImagePull: " + pullMsg, nil}},
		{name: "ImagePullBackOff", change: func(p *corev1.Pod, _ **State) {
			setStatus(p, waiting("proxy", oldID, "containerd://proxy-1", 0, "ImagePullBackOff", `Back-off pulling image "nginx:1.25.1"`))
		}, want: Result{Failed, "ImagePullBackOff", `container proxy: ImagePullBackOff: Back-off pulling image "nginx:1.25.1"`, nil}},
		{name: "CrashLoopBackOff of the new container", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			setStatus(p, waiting("app", "docker.io/library/nginx@"+dgNew, "containerd://app-2", 1, "CrashLoopBackOff", "back-off 10s restarting failed container=app"))
		}, want: Result{Failed, "CrashLoopBackOff", "container app: CrashLoopBackOff: back-off 10s restarting failed container=app", nil}},
		{name: "CrashLoopBackOff of the old container is not ours", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "CrashLoopBackOff", "back-off"))
		}, want: Result{InProgress, "CrashLoopBackOff", "container app: CrashLoopBackOff: back-off", nil}},
		{name: "restarted more than once", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			cs := running("app", "docker.io/library/nginx:1.25.1", "docker.io/library/nginx@"+dgNew, "containerd://app-4", 3)
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "panic: boom"}
			setStatus(p, cs)
		}, want: Result{Failed, ReasonCrashLoop, "container app restarted 3 times since the patch; last exit code 1 (Error): panic: boom", nil}},
		{name: "succeeded via imageID change", change: func(p *corev1.Pod, _ **State) { upgraded(p) },
			want: Result{Succeeded, ReasonUpdated, "every container runs docker.io/library/nginx:1.25.1@" + dgNew + " and is ready", nil}},
		{name: "succeeded via restart when the digest is unchanged", plan: tagOnlyPlan, change: func(p *corev1.Pod, _ **State) {
			setStatus(p, running("proxy", "docker.io/library/nginx:1.25.1", oldID, "containerd://proxy-2", 1))
			setStatus(p, running("app", "docker.io/library/nginx:1.25.1", oldID, "containerd://app-2", 1))
		}, want: Result{Succeeded, ReasonUpdated, "every container runs docker.io/library/nginx:1.25.1 and is ready", nil}},
		{name: "tag only, restarted but still the old image", plan: tagOnlyPlan, change: func(p *corev1.Pod, _ **State) {
			setStatus(p, running("proxy", "docker.io/library/nginx:1.24.0", oldID, "containerd://proxy-2", 1))
		}, want: Result{InProgress, ReasonRestarting, "container proxy restarted but still reports " + oldID, nil}},
		{name: "not ready", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			p.Status.ContainerStatuses[0].Ready = false
		}, want: Result{InProgress, ReasonNotReady, "container app runs nginx:1.25.1@" + dgNew + " but is not ready", nil}},
		{name: "unexpected digest", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			setStatus(p, running("app", "docker.io/library/nginx:1.25.1", "docker.io/library/nginx@"+dgOdd, "containerd://app-2", 1))
		}, want: Result{Failed, ReasonUnexpectedImage, "container app runs " + dgOdd + ", not the planned " + dgNew, nil}},
		{name: "pod replaced", change: func(p *corev1.Pod, _ **State) { p.UID = "uid-2" },
			want: Result{Failed, ReasonPodReplaced, "pod shop/web-1 has uid uid-2, not uid-1: it was replaced", nil}},
		{name: "pod deleting", change: func(p *corev1.Pod, _ **State) { p.DeletionTimestamp = &deleting },
			want: Result{Failed, ReasonPodDeleted, "pod shop/web-1 is being deleted", nil}},
		{name: "changed by others", change: func(p *corev1.Pod, _ **State) { p.Spec.Containers[0].Image = "nginx:9" },
			want: Result{Failed, ReasonChangedByOthers, "container app is set to nginx:9, not nginx:1.25.1@" + dgNew, nil}},
		{name: "no state yet", change: func(_ *corev1.Pod, st **State) { *st = nil },
			want: Result{InProgress, ReasonNotPatched, "the pod has no " + StateAnnotation + " yet", nil}},
		{name: "state of another upgrade", change: func(_ *corev1.Pod, st **State) { (*st).UpgradeID = "up-2" },
			want: Result{Failed, ReasonSuperseded, "the pod's state belongs to upgrade up-2", nil}},
		{name: "no status", change: func(p *corev1.Pod, _ **State) {
			upgraded(p)
			p.Status.ContainerStatuses = p.Status.ContainerStatuses[1:]
		},
			want: Result{InProgress, ReasonNoStatus, "container app has no status yet", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := webPlan()
			if tt.plan != nil {
				plan = tt.plan()
			}
			pod, st := patchedWith(t, plan)
			tt.change(pod, &st)
			got := Progress(pod, st, plan)
			got.Containers = nil // checked in TestProgressContainers
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgressContainers(t *testing.T) {
	pod, st := patchedWith(t, webPlan())
	upgraded(pod)
	got := Progress(pod, st, webPlan())
	want := []events.ContainerResult{
		{Name: "proxy", Image: "docker.io/library/nginx:1.25.1", ImageID: "docker.io/library/nginx@" + dgNew, RestartCount: 1},
		{Name: "app", Image: "docker.io/library/nginx:1.25.1", ImageID: "docker.io/library/nginx@" + dgNew, RestartCount: 1},
	}
	if diff := cmp.Diff(want, got.Containers); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r := Progress(nil, st, webPlan()); r.Verdict != Failed || r.Reason != ReasonPodDeleted || r.Containers != nil {
		t.Errorf("Progress(nil) = %+v; want Failed PodDeleted without containers", r)
	}
}

// Restarted: every planned container was replaced by one on its target,
// ready or not; one container left to restart (after one that is only
// not ready yet) is not.
func TestRestarted(t *testing.T) {
	oldID := "docker.io/library/nginx@" + dgOld
	notReady := func(p *corev1.Pod, name string) {
		for i := range p.Status.ContainerStatuses {
			if p.Status.ContainerStatuses[i].Name == name {
				p.Status.ContainerStatuses[i].Ready = false
			}
		}
	}
	tests := []struct {
		name   string
		change func(p *corev1.Pod)
		want   bool
	}{
		{"not yet observed generation", func(p *corev1.Pod) { p.Status.ObservedGeneration = 1 }, false},
		{"observed, not restarted yet", func(*corev1.Pod) {}, false},
		{"restarted and ready", upgraded, true},
		{"restarted, not ready yet", func(p *corev1.Pod) { upgraded(p); notReady(p, "proxy"); notReady(p, "app") }, true},
		{"one not ready yet, the other not restarted", func(p *corev1.Pod) {
			upgraded(p)
			notReady(p, "proxy")
			setStatus(p, running("app", "docker.io/library/nginx:1.24.0", oldID, "containerd://app-1", 0))
		}, false},
		{"one not ready yet, the other pulling", func(p *corev1.Pod) {
			upgraded(p)
			notReady(p, "proxy")
			setStatus(p, waiting("app", oldID, "containerd://app-1", 0, "ContainerCreating", ""))
		}, false},
		{"restarted onto another digest", func(p *corev1.Pod) {
			upgraded(p)
			setStatus(p, running("app", "docker.io/library/nginx:1.25.1", "docker.io/library/nginx@"+dgOdd, "containerd://app-2", 1))
			notReady(p, "app")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := patchedWith(t, webPlan())
			tt.change(pod)
			if got := Restarted(pod, st, webPlan()); got != tt.want {
				t.Errorf("Restarted = %v, want %v (%+v)", got, tt.want, Progress(pod, st, webPlan()))
			}
		})
	}
}

// Taken: a kubelet that reports the generation has taken the patch up
// once it observed it, old containers still running or not; one that does
// not report it, once every planned container was replaced.
func TestTaken(t *testing.T) {
	oldID := "docker.io/library/nginx@" + dgOld
	tests := []struct {
		name   string
		change func(p *corev1.Pod)
		want   bool
	}{
		{"not yet observed generation", func(p *corev1.Pod) { p.Status.ObservedGeneration = 1 }, false},
		{"observed, old containers still running", func(*corev1.Pod) {}, true},
		{"observed, replaced", upgraded, true},
		{"not reported, old containers still running", func(p *corev1.Pod) { p.Status.ObservedGeneration = 0 }, false},
		{"not reported, one replaced", func(p *corev1.Pod) {
			p.Status.ObservedGeneration = 0
			upgraded(p)
			setStatus(p, running("app", "docker.io/library/nginx:1.24.0", oldID, "containerd://app-1", 0))
		}, false},
		{"not reported, replaced", func(p *corev1.Pod) { p.Status.ObservedGeneration = 0; upgraded(p) }, true},
		{"observed, changed by others", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:9" }, false},
		{"observed, pull failing", func(p *corev1.Pod) {
			setStatus(p, waiting("proxy", oldID, "containerd://proxy-1", 0, "ImagePullBackOff", "not found"))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, st := patchedWith(t, webPlan())
			tt.change(pod)
			if got := Taken(pod, st, webPlan()); got != tt.want {
				t.Errorf("Taken = %v, want %v (%+v)", got, tt.want, Progress(pod, st, webPlan()))
			}
		})
	}
}
