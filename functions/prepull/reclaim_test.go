package prepull

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// slotPod is a pre-pull pod of image in slot i of node-1, created at, in
// state.
func slotPod(cfg config.Defaults, i int, image string, at time.Time, state corev1.ContainerState) *corev1.Pod {
	p := podFor(cfg.PrepullNamespace, slotName("node-1", i), "node-1", "amd64", []string{image}, at)
	p.UID, p.CreationTimestamp = types.UID("uid-"+p.Name), metav1.NewTime(at)
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: image, State: state}}
	return p
}

func terminated(at time.Time) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: metav1.NewTime(at)}}
}

var (
	backOffState = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	pullingState = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
)

// A pod whose pull ended longer than the grace ago holds its slot and
// pulls nothing, whoever was to follow it: pulled, failed, or pending past
// the timeout. One pulling within the timeout, one that ended moments ago
// (its plan is about to end it), or one being deleted is left alone.
func TestEndedPulls(t *testing.T) {
	cfg := config.StandardDefaults()
	now, grace := time.Now(), 10*time.Second
	long := now.Add(-time.Minute)
	deleting := slotPod(cfg, 1, "r/a:5", long, terminated(long))
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"pulled long ago", slotPod(cfg, 0, "r/a:1", long, terminated(long)), true},
		{"pulled moments ago", slotPod(cfg, 0, "r/a:1", long, terminated(now.Add(-time.Second))), false},
		{"failed long ago", slotPod(cfg, 0, "r/a:2", long, backOffState), true},
		{"pulling", slotPod(cfg, 0, "r/a:3", long, pullingState), false},
		{"pulling past the timeout", slotPod(cfg, 0, "r/a:4", now.Add(-cfg.PrepullTimeout-grace-time.Second), pullingState), true},
		{"being deleted", deleting, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := len(ended([]corev1.Pod{*tt.pod}, cfg.PrepullTimeout, grace, now)) == 1
			if got != tt.want {
				t.Errorf("ended = %v, want %v", got, tt.want)
			}
		})
	}
}

// A node whose slots are all held by pods whose pull ended a while ago
// (pulls started ahead for a rollout a newer push superseded, or whose
// follower is gone)
// gives them back to the next plan: the ended pods are deleted, the plan
// waits for their deletion, then pulls in a freed slot, instead of waiting
// for a slot until prepull-timeout; the pull seen done is remembered.
func TestEndedPullsGiveTheirSlotsBack(t *testing.T) {
	cfg := config.StandardDefaults()
	long := time.Now().Add(-time.Minute)
	done := slotPod(cfg, 0, "r.example/shop/web:3.1.0", long, terminated(long))
	broken := slotPod(cfg, 1, "r.example/other/app:1.0.0", long, backOffState)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}} // lists nothing yet
	client := fake.NewClientset(done, broken, node)
	f := New(Deps{Client: client, Config: config.NewStore(cfg, nil)})
	c := events.ContainerPlan{Name: "app", FromImage: "r.example/shop/web:3.0.0", ToImage: "r.example/shop/web:3.2.0"}
	plan := events.Plan{UpgradeID: "u-2", Prepull: true, Containers: []events.ContainerPlan{c}, Target: c.ToImage, PlannedAt: time.Now(),
		Owner: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
		Pod:   events.PodRef{Namespace: "shop", Name: "web-1", UID: "uid-web-1", Node: "node-1"}}
	e, err := events.New("plan-web-1", events.UpgradePlanned, events.Source("test"), plan.Pod.String(), plan)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for range 2 {
		_, err := f.handle(t.Context(), e, plan)
		if k, _ := settle.Classify(err); k != settle.Later {
			t.Fatalf("handle: %v; want not yet", err)
		}
		said = append(said, err.Error())
	}
	var deleted, created []string
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "delete":
			deleted = append(deleted, a.(k8stesting.DeleteAction).GetName())
		case "create":
			created = append(created, a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).Spec.Containers[0].Image)
		}
	}
	if diff := cmp.Diff([]string{done.Name, broken.Name}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s\nsaid %q", diff, said)
	}
	if diff := cmp.Diff([]string{c.ToImage}, created); diff != "" || !strings.Contains(said[1], "created") {
		t.Errorf("created (-want +got):\n%s\nsaid %q", diff, said)
	}
	if !f.pulledOn("node-1", []string{"r.example/shop/web:3.1.0"}, false) {
		t.Error("the ended pull of 3.1.0 is not remembered as pulled on node-1")
	}
}

// A rollout superseded by a newer push ends the pulls started ahead for
// it (Warm with the newer record): none of its pending pods will follow
// them, and each would hold its node's slot until the sweep.
func TestWarmEndsTheSupersededRolloutsPulls(t *testing.T) {
	cfg := config.StandardDefaults()
	ahead := slotPod(cfg, 0, "r.example/shop/web:3.1.0", time.Now(), terminated(time.Now()))
	ahead.Labels[LabelUpgrade] = "u-1"
	other := slotPod(cfg, 1, "r.example/other/app:2.0.0", time.Now(), pullingState)
	other.Labels[LabelUpgrade] = "u-other"
	client := fake.NewClientset(ahead, other, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
	f := New(Deps{Client: client, Config: config.NewStore(cfg, nil)})
	r := rollout.Rollout{UpgradeID: "u-2", Superseded: "u-1", Phase: rollout.Running, Options: rollout.Options{Prepull: true},
		Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"}, Pods: map[string]*rollout.Pod{}}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	f.Warm(t.Context(), rollout.Key(r.Workload), 0, raw)
	pods, err := client.CoreV1().Pods(cfg.PrepullNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	if diff := cmp.Diff([]string{other.Name}, left); diff != "" {
		t.Errorf("pre-pull pods left (-want +got):\n%s", diff)
	}
}
