package controller_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/pulls"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// memPulls is the nodes' pulls in memory: node-0 and node-1 know no
// image, and node-0 has a pre-pull pod of web:1.3.0 under way.
type memPulls struct{ now time.Time }

func (memPulls) NodeImages(name string) ([]corev1.ContainerImage, bool) {
	return nil, name == "node-0" || name == "node-1"
}

func (m memPulls) PrepullPods(ns string) ([]*corev1.Pod, error) {
	images := []string{"r.example/shop/web:1.3.0"}
	return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "prepull-node-0", Namespace: ns, CreationTimestamp: metav1.NewTime(m.now),
		Labels: map[string]string{pulls.LabelManagedBy: pulls.ManagedBy, pulls.LabelComponent: pulls.Component, pulls.LabelImages: pulls.Key(images)}},
		Spec:   corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{Name: "pull-a", Image: images[0]}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}}, nil
}

// HoldPulling marks the candidate whose node is pulling its image, and
// leaves the candidates it was given as they were: the planner's memo
// shares them with every observation of the same pods.
func TestHoldPullingLeavesItsCandidatesAlone(t *testing.T) {
	now := time.Now()
	ctl := controller.New(controller.Deps{Pulls: memPulls{now: now}, Defaults: config.NewStore(config.StandardDefaults(), nil)})
	plan := []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1.2.0", ToImage: "r.example/shop/web:1.3.0"}}
	cand := func(name, node string, held bool) rollout.Candidate {
		return rollout.Candidate{Pod: events.PodRef{Namespace: "shop", Name: name, UID: "uid-" + name, Node: node},
			Ready: true, Ordinal: -1, Containers: plan, Held: held}
	}
	for _, tc := range []struct {
		name     string
		prepull  bool
		cands    []rollout.Candidate
		wantHeld []bool
	}{
		{"a pull under way holds its node's pod", true,
			[]rollout.Candidate{cand("web-0", "node-0", false), cand("web-1", "node-1", false)}, []bool{true, false}},
		{"a pull ended frees a pod held before", true,
			[]rollout.Candidate{cand("web-0", "node-1", true), cand("web-1", "node-1", false)}, []bool{false, false}},
		{"without pre-pull nothing is held", false,
			[]rollout.Candidate{cand("web-0", "node-0", true), cand("web-1", "node-1", false)}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			view, err := ctl.ViewPulls(tc.cands)
			if err != nil {
				t.Fatal(err)
			}
			r := &rollout.Rollout{UpgradeID: "u-1", Phase: rollout.Running, Options: rollout.Options{Budget: 1, Prepull: tc.prepull},
				Pods: map[string]*rollout.Pod{}}
			given := append([]rollout.Candidate(nil), tc.cands...)
			got := controller.HoldPulling(view, r, tc.cands, time.Minute, now)
			var held []bool
			for _, c := range got {
				held = append(held, c.Held)
			}
			if d := cmp.Diff(tc.wantHeld, held); d != "" {
				t.Errorf("Held (-want +got):\n%s", d)
			}
			if d := cmp.Diff(given, tc.cands); d != "" {
				t.Errorf("the candidates given changed (-given +after):\n%s", d)
			}
		})
	}
}
