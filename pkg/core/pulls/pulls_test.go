package pulls

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
)

func TestIsPrepull(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"both labels", map[string]string{LabelManagedBy: ManagedBy, LabelComponent: Component}, true},
		{"managed by someone else", map[string]string{LabelManagedBy: "helm", LabelComponent: Component}, false},
		{"another component of ours", map[string]string{LabelManagedBy: ManagedBy, LabelComponent: "verify"}, false},
		{"no labels", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}}
			if got := IsPrepull(p); got != tt.want {
				t.Errorf("IsPrepull(%v) = %v, want %v", tt.labels, got, tt.want)
			}
		})
	}
}

func TestTargets(t *testing.T) {
	tests := []struct {
		name       string
		containers []events.ContainerPlan
		want       []string
		wantAlways bool
	}{
		{"none", nil, nil, false},
		{"distinct and sorted", []events.ContainerPlan{{ToImage: "r/b:2"}, {ToImage: "r/a:1"}, {ToImage: "r/b:2"}},
			[]string{"r/a:1", "r/b:2"}, false},
		{"one pulls Always", []events.ContainerPlan{{ToImage: "r/a:1", PullPolicy: "IfNotPresent"}, {ToImage: "r/b:1", PullPolicy: "Always"}},
			[]string{"r/a:1", "r/b:1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, always := Targets(tt.containers)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
			if always != tt.wantAlways {
				t.Errorf("always = %v, want %v", always, tt.wantAlways)
			}
		})
	}
}

// Key is a valid label value, stable, and tells sets apart even where a
// plain concatenation would not.
func TestKey(t *testing.T) {
	k := Key([]string{"r/a:1", "r/b:2"})
	if len(k) != 20 || k != Key([]string{"r/a:1", "r/b:2"}) {
		t.Fatalf("Key = %q: want 20 characters, the same every time", k)
	}
	for _, other := range [][]string{{"r/a:1"}, {"r/a:1r/b:2"}, {"r/a:1r", "/b:2"}, {"r/b:2", "r/a:1"}} {
		if Key(other) == k {
			t.Errorf("Key(%q) = Key([r/a:1 r/b:2]) = %s", other, k)
		}
	}
}

func TestEvaluate(t *testing.T) {
	waiting := func(reason, msg string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	exited := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 127}}
	tests := []struct {
		name     string
		phase    corev1.PodPhase
		statuses []corev1.ContainerStatus
		want     Verdict
		wantMsg  string
	}{
		{"no status yet", corev1.PodPending, nil, Pending, "pre-pull pod pp is Pending"},
		{"both ran", corev1.PodRunning, []corev1.ContainerStatus{{Image: "a", State: running}, {Image: "b", State: exited}}, Pulled, ""},
		{"created, state not reported", corev1.PodPending,
			[]corev1.ContainerStatus{{Image: "a", ImageID: "sha256:1", State: running}, {Image: "b", ImageID: "sha256:2"}}, Pulled, ""},
		{"one still pulling", corev1.PodPending,
			[]corev1.ContainerStatus{{Image: "a", State: running}, {Image: "b", State: waiting("ContainerCreating", "pulling")}},
			Pending, "b: ContainerCreating pulling"},
		{"ErrImagePull is left to back off", corev1.PodPending,
			[]corev1.ContainerStatus{{Image: "a", State: running}, {Image: "b", State: waiting("ErrImagePull", "not found")}},
			Pending, "b: ErrImagePull not found"},
		{"back-off fails", corev1.PodPending,
			[]corev1.ContainerStatus{{Image: "a", State: running}, {Image: "b", State: waiting("ImagePullBackOff", "back-off")}},
			Failed, "b: ImagePullBackOff: back-off"},
		{"invalid name fails", corev1.PodPending,
			[]corev1.ContainerStatus{{Image: "B", State: waiting("InvalidImageName", "bad")}, {Image: "b", State: running}},
			Failed, "B: InvalidImageName: bad"},
		{"pod failed before pulling", corev1.PodFailed, nil, Failed, "pre-pull pod pp: phase Failed: Evicted low disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "pp"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
				Status:     corev1.PodStatus{Phase: tt.phase, ContainerStatuses: tt.statuses},
			}
			if tt.phase == corev1.PodFailed {
				p.Status.Reason, p.Status.Message = "Evicted", "low disk"
			}
			v, msg := Evaluate(p)
			if v != tt.want || msg != tt.wantMsg {
				t.Errorf("Evaluate = %v, %q; want %v, %q", v, msg, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestOnNode(t *testing.T) {
	const digest = "sha256:0123456789012345678901234567890123456789012345678901234567890123"
	const other = "sha256:9999999999999999999999999999999999999999999999999999999999999999"
	node := []corev1.ContainerImage{
		{Names: []string{"reg.example/app@" + digest, "reg.example/app:v2"}},
		{Names: []string{"reg.example/base:latest"}},
	}
	tests := []struct {
		name   string
		images []string
		always bool
		want   bool
	}{
		{"by tag", []string{"reg.example/app:v2"}, false, true},
		{"by digest", []string{"reg.example/app:v3@" + digest}, false, true},
		{"another digest", []string{"reg.example/app@" + other}, false, false},
		{"another tag", []string{"reg.example/app:v3"}, false, false},
		{"no tag means latest", []string{"reg.example/base"}, false, true},
		{"another repository, same tag", []string{"reg.example/web:v2"}, false, false},
		{"Always trusts only a digest", []string{"reg.example/app:v2"}, true, false},
		{"Always with a digest", []string{"reg.example/app@" + digest}, true, true},
		{"every image must be there", []string{"reg.example/app:v2", "reg.example/app:v3"}, false, false},
		{"an unparseable image is not there", []string{"UPPER/Case:1"}, false, false},
		{"nothing asked", nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OnNode(node, tt.images, tt.always); got != tt.want {
				t.Errorf("OnNode(%v, always=%v) = %v, want %v", tt.images, tt.always, got, tt.want)
			}
		})
	}
}
