package watcher

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
)

const active = `{"upgradeID":"up-1","phase":"Patched","containers":[{"name":"app","previousImage":"a:1","previousContainerID":"containerd://a","targetImage":"a:2","previousRestartCount":0}]}`

// pod is a pod whose container app is set to a:2 (what active plans), its
// status at restartCount restarts in container containerID, neither
// running nor waiting.
func pod(rv, state string, restarts int32, containerID string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1", ResourceVersion: rv},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a:2"}, {Name: "side", Image: "s:1"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", RestartCount: restarts, ContainerID: containerID, Image: "a:2", ImageID: "a@sha256:2"},
			{Name: "side", ContainerID: "containerd://side"},
		}},
	}
	if state != "" {
		p.Annotations = map[string]string{inplace.StateAnnotation: state}
	}
	return p
}

// waiting is p with app waiting for reason.
func waiting(p *corev1.Pod, reason string) *corev1.Pod {
	p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: reason}
	return p
}

// up is p with app running and ready: on a:2 and restarted, the upgrade
// active plans has landed.
func up(p *corev1.Pod) *corev1.Pod {
	p.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{}
	p.Status.ContainerStatuses[0].Ready = true
	return p
}

// held is p declaring the gate, held False by patch-pod for up-1, at
// generation 2 with the kubelet having observed observed.
func held(p *corev1.Pod, observed int64) *corev1.Pod {
	p.Generation = 2
	p.Status.ObservedGeneration = observed
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
	p.Status.Conditions = []corev1.PodCondition{{Type: inplace.ReadinessGate, Status: corev1.ConditionFalse,
		Reason: inplace.GateReasonStart, Message: "in-place upgrade up-1 starts"}}
	return p
}

func TestChanges(t *testing.T) {
	updatedID := func(p *corev1.Pod) string { return events.DeriveID(events.PodStateKey(p), events.PodUpdated, "") }
	restartedID := func(p *corev1.Pod) string {
		return events.DeriveID(events.PodStateKey(p), events.ContainerRestarted, "app")
	}
	landed := up(pod("11", active, 1, "containerd://b"))
	pulling := waiting(pod("11", active, 0, "containerd://a"), "ErrImagePull")
	creating := waiting(pod("11", active, 0, "containerd://a"), "ContainerCreating")
	stopped := pod("11", active, 1, "containerd://b")
	unobserved := pod("11", active, 0, "containerd://a")
	unobserved.Generation, unobserved.Status.ObservedGeneration = 2, 1
	observed := pod("12", active, 0, "containerd://a")
	observed.Generation, observed.Status.ObservedGeneration = 2, 2
	tests := []struct {
		name     string
		old, cur *corev1.Pod
		want     []string // ids
	}{
		{"no state", nil, pod("10", "", 0, "containerd://a"), nil},
		{"finished upgrade", pod("10", "", 0, "containerd://a"),
			pod("11", `{"upgradeID":"up-1","phase":"Succeeded","containers":[]}`, 1, "containerd://b"), nil},
		{"first sight", nil, pod("10", active, 0, "containerd://a"), []string{updatedID(pod("10", active, 0, ""))}},
		// verify's decision changes: the completion check fails (a pull
		// error), or passes (the upgrade landed).
		{"status change that fails the check", pod("10", active, 0, "containerd://a"), pulling, []string{updatedID(pulling)}},
		{"container restarted and landed", pod("10", active, 0, "containerd://a"), landed, []string{updatedID(landed), restartedID(landed)}},
		{"new container id only, landed", pod("10", active, 1, "containerd://a"), landed, []string{updatedID(landed), restartedID(landed)}},
		// the kubelet on its way while the check waits: verify would only
		// wait again; a restart is still told.
		{"status change while the check waits", pod("10", active, 0, "containerd://a"), creating, nil},
		{"container restarted, not running yet", pod("10", active, 0, "containerd://a"), stopped, []string{restartedID(stopped)}},
		{"the kubelet observed the patch, no gate", unobserved, observed, nil},
		// with patch-pod's gate held, the kubelet taking the patch up is
		// when verify opens it.
		{"the kubelet observed the patch, gate held", held(unobserved.DeepCopy(), 1), held(observed.DeepCopy(), 2), []string{updatedID(observed)}},
		{"resync: same state, same id", creating, creating, []string{updatedID(creating)}},
		// patch-pod's write of the plan: its pod.patched wakes verify.
		{"patch-pod's write", pod("10", "", 0, "containerd://a"), pod("11", active, 0, "containerd://a"), nil},
		{"patch-pod's write after an earlier upgrade", pod("10", `{"upgradeID":"up-0","phase":"Succeeded","containers":[]}`, 0, "containerd://a"),
			pod("11", active, 0, "containerd://a"), nil},
		{"the plan's write and a kubelet change in one", pod("10", "", 0, "containerd://a"), stopped, []string{updatedID(stopped), restartedID(stopped)}},
		{"the state rewritten within the upgrade", pod("10", `{"upgradeID":"up-1","phase":"Patched","reason":"x","containers":[]}`, 0, "containerd://a"),
			pod("11", active, 0, "containerd://a"), []string{updatedID(pod("11", active, 0, ""))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := Changes(tt.old, tt.cur)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range outs {
				got = append(got, e.ID())
				if events.UpgradeID(e) != "up-1" || e.Source() != Source {
					t.Errorf("%s: upgradeid %q source %q", e.Type(), events.UpgradeID(e), e.Source())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestartedData(t *testing.T) {
	outs, err := Changes(pod("10", active, 0, "containerd://a"), up(pod("11", active, 1, "containerd://b")))
	if err != nil || len(outs) != 2 {
		t.Fatalf("Changes = %d events, %v", len(outs), err)
	}
	got, err := events.As[events.ContainerRestartedData](outs[1])
	if err != nil {
		t.Fatal(err)
	}
	want := events.ContainerRestartedData{Pod: events.PodRef{Namespace: "ns", Name: "web", UID: "uid-1"}, Container: "app",
		OldContainerID: "containerd://a", NewContainerID: "containerd://b", RestartCount: 1, Image: "a:2", ImageID: "a@sha256:2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDeleted(t *testing.T) {
	last := pod("11", active, 1, "containerd://b")
	e, ok, err := Deleted(last)
	if err != nil || !ok {
		t.Fatalf("Deleted = %v, %v", ok, err)
	}
	if e.ID() == events.DeriveID(events.PodStateKey(last), events.PodUpdated, "") {
		t.Error("the deletion's id equals the last update's: the stream would drop it")
	}
	if _, ok, _ := Deleted(pod("11", "", 1, "")); ok {
		t.Error("an event for a deleted pod without an upgrade in flight")
	}
}

func TestNeedsGate(t *testing.T) {
	gated := func(state string, conds ...corev1.PodCondition) *corev1.Pod {
		p := pod("10", state, 0, "")
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}
		p.Status.Conditions = conds
		p.Spec.NodeName = "node-1"
		return p
	}
	deleting := gated("")
	deleting.DeletionTimestamp = &metav1.Time{}
	unbound := gated("")
	unbound.Spec.NodeName = ""
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"new gated pod", gated(""), true},
		{"finished upgrade", gated(`{"upgradeID":"u","phase":"RolledBack","containers":[]}`), true},
		{"upgrade in flight", gated(active), false},
		{"condition present", gated("", corev1.PodCondition{Type: inplace.ReadinessGate, Status: corev1.ConditionFalse}), false},
		{"no gate", pod("10", "", 0, ""), false},
		{"being deleted", deleting, false},
		{"not bound to a node yet", unbound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NeedsGate(tt.pod); got != tt.want {
				t.Errorf("NeedsGate = %v, want %v", got, tt.want)
			}
		})
	}
}
