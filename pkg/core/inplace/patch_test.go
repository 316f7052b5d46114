package inplace

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

var t0 = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func TestPatchGolden(t *testing.T) {
	p := webPod()
	p.Annotations = map[string]string{"team": "shop"}
	got, err := Patch(p, webPlan(), t0)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "patch_web", got)
}

func TestPatchApplies(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		replaced    *Replaced
	}{
		{"without annotations", nil, nil},
		{"with annotations", map[string]string{"team": "shop", StateAnnotation: `{"upgradeID":"up-0","target":"x","phase":"Succeeded","containers":[]}`},
			&Replaced{UpgradeID: "up-0", Phase: PhaseSucceeded, FinishedAt: t0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod()
			pod.Annotations = tt.annotations
			patch, err := Patch(pod, webPlan(), t0)
			if err != nil {
				t.Fatal(err)
			}
			var got corev1.Pod
			if err := apply(t, pod, patch, &got); err != nil {
				t.Fatalf("apply: %v", err)
			}
			wantImages := map[string]string{"init-db": "nginx:1.24.0", "proxy": "docker.io/library/nginx:1.25.1@" + dgNew,
				"app": "nginx:1.25.1@" + dgNew, "metrics": "prom/statsd-exporter:v0.26.0"}
			if diff := cmp.Diff(wantImages, TemplateImages(got.Spec)); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			if tt.annotations["team"] != got.Annotations["team"] {
				t.Errorf("annotation team = %q; want it kept", got.Annotations["team"])
			}
			st, err := ParseState(&got)
			if err != nil {
				t.Fatal(err)
			}
			want := wantPatchedState()
			want.Replaced = tt.replaced
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func wantPatchedState() *State {
	return &State{UpgradeID: "up-1", Target: "docker.io/library/nginx:1.25.1@" + dgNew, Phase: PhasePatched, PatchedAt: t0,
		Owner: webPlan().Owner,
		Containers: []ContainerState{
			{Name: "proxy", Sidecar: true, PreviousImage: "docker.io/library/nginx:1.24.0", PreviousImageID: "docker.io/library/nginx@" + dgOld,
				PreviousContainerID: "containerd://proxy-1", TargetImage: "docker.io/library/nginx:1.25.1@" + dgNew, TargetDigest: dgNew,
				PullPolicy: "IfNotPresent"},
			{Name: "app", PreviousImage: "nginx:1.24.0", PreviousImageID: "docker.io/library/nginx@" + dgOld,
				PreviousContainerID: "containerd://app-1", TargetImage: "nginx:1.25.1@" + dgNew, TargetDigest: dgNew,
				PullPolicy: "IfNotPresent"},
		}}
}

// TestPatchPreconditions: the test ops make the API server refuse the patch
// when the pod changed after it was read.
func TestPatchPreconditions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*corev1.Pod)
	}{
		{"stale resourceVersion", func(p *corev1.Pod) { p.ResourceVersion = "101" }},
		{"another uid", func(p *corev1.Pod) { p.UID = "uid-2" }},
		{"image changed meanwhile", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.24.9" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := Patch(webPod(), webPlan(), t0)
			if err != nil {
				t.Fatal(err)
			}
			now := webPod()
			tt.change(now)
			var got corev1.Pod
			if err := apply(t, now, patch, &got); err == nil || !strings.Contains(err.Error(), "test") {
				t.Errorf("apply error = %v; want a failed test operation", err)
			}
		})
	}
}

func TestPatchRefuses(t *testing.T) {
	deleting := metav1.NewTime(t0)
	tests := []struct {
		name      string
		change    func(*corev1.Pod)
		permanent bool
		is        error
		msg       string
	}{
		{name: "another uid", change: func(p *corev1.Pod) { p.UID = "uid-2" }, permanent: true, msg: "the pod was replaced"},
		{name: "being deleted", change: func(p *corev1.Pod) { p.DeletionTimestamp = &deleting }, permanent: true, msg: "being deleted"},
		{name: "container gone", change: func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[1:] }, permanent: true, msg: `container "app" is gone`},
		{name: "container on a third image", change: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:9" }, permanent: true,
			msg: "changed by someone else"},
		{name: "malformed state", change: func(p *corev1.Pod) { p.Annotations = map[string]string{StateAnnotation: "{"} }, permanent: true,
			msg: "annotation " + StateAnnotation},
		{name: "same upgrade already patched", is: ErrAlreadyApplied,
			change: func(p *corev1.Pod) { p.Annotations = map[string]string{StateAnnotation: wantPatchedState().Encode()} }},
		{name: "another upgrade still active", is: ErrBusy, msg: "upgrade up-0 is still Patched",
			change: func(p *corev1.Pod) {
				p.Annotations = map[string]string{StateAnnotation: State{UpgradeID: "up-0", Phase: PhasePatched}.Encode()}
			}},
		{name: "already on the target images", is: ErrAlreadyApplied,
			change: func(p *corev1.Pod) {
				p.Spec.InitContainers[1].Image = "docker.io/library/nginx:1.25.1@" + dgNew
				p.Spec.Containers[0].Image = "nginx:1.25.1@" + dgNew
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := webPod()
			tt.change(pod)
			_, err := Patch(pod, webPlan(), t0)
			if err == nil {
				t.Fatal("Patch accepted it")
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

func TestPatchSkipsContainerAlreadyOnTarget(t *testing.T) {
	pod := webPod()
	pod.Spec.InitContainers[1].Image = "docker.io/library/nginx:1.25.1@" + dgNew
	patch, err := Patch(pod, webPlan(), t0)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := apply(t, pod, patch, &got); err != nil {
		t.Fatal(err)
	}
	st, _ := ParseState(&got)
	names := []string{}
	for _, c := range st.Containers {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"app"}, names); diff != "" {
		t.Errorf("state containers (-want +got):\n%s", diff)
	}
}
