package prepull

import (
	"time"

	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

func statusPod(phase corev1.PodPhase, states ...corev1.ContainerState) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pp"}, Status: corev1.PodStatus{Phase: phase}}
	for i, s := range states {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c"})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: "c", Image: "r/a:" + string(rune('1'+i)), State: s})
	}
	return p
}

func TestEvaluate(t *testing.T) {
	waiting := func(r, m string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r, Message: m}}
	}
	done := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	startErr := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError"}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		want    verdict
		wantMsg string
	}{
		{"no status yet", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pp"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}, pending, "pre-pull pod pp is Pending"},
		{"pulling", statusPod(corev1.PodPending, waiting("ContainerCreating", "")), pending, "r/a:1: ContainerCreating "},
		{"every container ran", statusPod(corev1.PodSucceeded, done, done), pulled, ""},
		{"running", statusPod(corev1.PodRunning, running), pulled, ""},
		{"command missing from the image still pulled", statusPod(corev1.PodFailed, startErr), pulled, ""},
		{"one still pulling", statusPod(corev1.PodPending, done, waiting("ContainerCreating", "")), pending, "r/a:2: ContainerCreating "},
		{"first ErrImagePull waits for back-off", statusPod(corev1.PodPending, waiting("ErrImagePull", "not found")), pending, "r/a:1: ErrImagePull not found"},
		{"back-off fails", statusPod(corev1.PodPending, done, waiting("ImagePullBackOff", "Back-off pulling image: not found")),
			failed, "r/a:2: ImagePullBackOff: Back-off pulling image: not found"},
		{"invalid name fails", statusPod(corev1.PodPending, waiting("InvalidImageName", "bad")), failed, "r/a:1: InvalidImageName: bad"},
		{"failed pod without statuses", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pp"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{}}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfpods", Message: "node full"}},
			failed, "pre-pull pod pp: phase Failed: OutOfpods node full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := evaluate(tt.pod)
			if diff := cmp.Diff([]any{tt.want, tt.wantMsg}, []any{got, msg}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOnNode(t *testing.T) {
	const d = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	have := []corev1.ContainerImage{
		{Names: []string{"docker.io/library/nginx@" + d, "docker.io/library/nginx:1.25"}},
		{Names: []string{"127.0.0.1:5000/app@sha256:2222222222222222222222222222222222222222222222222222222222222222"}},
	}
	tests := []struct {
		name   string
		images []string
		always bool
		want   bool
	}{
		{"by digest, short name", []string{"nginx:1.26@" + d}, false, true},
		{"by tag", []string{"nginx:1.25"}, false, true},
		{"by tag but pulls always", []string{"nginx:1.25"}, true, false},
		{"by digest and pulls always", []string{"nginx@" + d}, true, true},
		{"other tag", []string{"nginx:1.26"}, false, false},
		{"other digest", []string{"127.0.0.1:5000/app@" + d}, false, false},
		{"one of two missing", []string{"nginx:1.25", "127.0.0.1:5000/app:v2"}, false, false},
		{"unparsable", []string{"UPPER CASE"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onNode(have, tt.images, tt.always); got != tt.want {
				t.Errorf("onNode(%v) = %v, want %v", tt.images, got, tt.want)
			}
		})
	}
}

func TestFreeSlot(t *testing.T) {
	pod := func(name string) corev1.Pod { return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	tests := []struct {
		name   string
		pods   []corev1.Pod
		n      int
		want   string
		wantOK bool
	}{
		{"empty node", nil, 2, slotName("n1", 0), true},
		{"first taken", []corev1.Pod{pod(slotName("n1", 0))}, 2, slotName("n1", 1), true},
		{"full", []corev1.Pod{pod(slotName("n1", 1)), pod(slotName("n1", 0))}, 2, "", false},
		{"other node's names do not count", []corev1.Pod{pod(slotName("n2", 0))}, 1, slotName("n1", 0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := freeSlot(tt.pods, "n1", tt.n)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("freeSlot = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestPodFor(t *testing.T) {
	plan := events.Plan{Containers: []events.ContainerPlan{{ToImage: "r/b:2"}, {ToImage: "r/a:1"}, {ToImage: "r/b:2"}}}
	images := targets(plan)
	if diff := cmp.Diff([]string{"r/a:1", "r/b:2"}, images); diff != "" {
		t.Fatalf("targets (-want +got):\n%s", diff)
	}
	p := podFor("inplace-system", slotName("node-1", 0), "node-1", "amd64", images, time.Now())
	var got []string
	for _, c := range p.Spec.Containers {
		got = append(got, c.Image+" "+string(c.ImagePullPolicy))
	}
	if diff := cmp.Diff([]string{"r/a:1 IfNotPresent", "r/b:2 IfNotPresent"}, got); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"nodeName", p.Spec.NodeName, "node-1"},
		{"restartPolicy", p.Spec.RestartPolicy, corev1.RestartPolicyNever},
		{"tolerates every taint", p.Spec.Tolerations, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		{"images label", p.Labels[LabelImages], imagesKey(images)},
		{"managed-by", p.Labels[LabelManagedBy], ManagedBy},
		{"no token", *p.Spec.AutomountServiceAccountToken, false},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	if imagesKey([]string{"r/a:1"}) == imagesKey(images) || slotName("node-1", 0) == slotName("node-2", 0) {
		t.Error("keys or slot names collide")
	}
}

// The pull is timed from pre-pull's own stamp on the pod, not from its
// creationTimestamp, which has whole seconds (it made a pull that took
// 1.03 s since the plan read "pulled in 1.885s").
func TestCreatedAtIsPrecise(t *testing.T) {
	created := time.Date(2026, 5, 1, 10, 2, 11, 930_000_000, time.UTC)
	p := podFor("inplace-system", slotName("node-1", 0), "node-1", "amd64", []string{"r/a:1"}, created)
	p.CreationTimestamp = metav1.NewTime(created.Truncate(time.Second))
	if got := createdAt(p); !got.Equal(created) {
		t.Errorf("createdAt = %s; want %s (the stamp, not the whole-second creationTimestamp)", got, created)
	}
	delete(p.Annotations, AnnotationCreated)
	if got := createdAt(p); !got.Equal(created.Truncate(time.Second)) {
		t.Errorf("without the stamp createdAt = %s; want the creationTimestamp", got)
	}
}
