package prepull

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A node whose pre-pull pod pulled the images, before the node lists them
// (the kubelet refreshes status.images every 30 s or so): the next pod
// planned there is told the images are pulled, and no second pre-pull pod
// is created for it, by its plan or ahead (Warm); a container pulling
// Always is still pre-pulled.
func TestAPullSeenDoneIsNotRepeated(t *testing.T) {
	cfg := config.StandardDefaults()
	images := []string{"r.example/shop/web:1.3.0@sha256:2222222222222222222222222222222222222222222222222222222222222222"}
	done := podFor(cfg.PrepullNamespace, slotName("node-1", 0), "node-1", "amd64", images, time.Now())
	done.UID = "uid-pull-1"
	done.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: done.Spec.Containers[0].Name, Image: images[0],
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}} // lists nothing yet
	client := fake.NewClientset(done, node)
	f := New(Deps{Client: client, Config: config.NewStore(cfg, nil)})
	plan := func(pod string, always bool) events.Plan {
		c := events.ContainerPlan{Name: "app", FromImage: "r.example/shop/web:1.2.0", ToImage: images[0]}
		if always {
			c.PullPolicy = string(corev1.PullAlways)
		}
		return events.Plan{UpgradeID: "u-1", Prepull: true, Containers: []events.ContainerPlan{c}, Target: images[0],
			Owner: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
			Pod:   events.PodRef{Namespace: "shop", Name: pod, UID: "uid-" + pod, Node: "node-1"}}
	}
	skipped := func(p events.Plan) (string, error) {
		e, err := events.New("plan-"+p.Pod.Name, events.UpgradePlanned, events.Source("test"), p.Pod.String(), p)
		if err != nil {
			t.Fatal(err)
		}
		outs, err := f.handle(t.Context(), e, p)
		if err != nil || len(outs) != 1 {
			return "", err
		}
		d, err := events.As[events.PrepulledData](outs[0])
		return d.Skipped, err
	}
	if got, err := skipped(plan("web-0", false)); err != nil || got != "" {
		t.Fatalf("the pre-pull pod's own plan: skipped %q, %v; want it pulled", got, err)
	}
	if got, err := skipped(plan("web-1", false)); err != nil || got != SkipPulled {
		t.Errorf("the next pod on the node: skipped %q, %v; want %q", got, err, SkipPulled)
	}
	creates := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "create" {
				n++
			}
		}
		return n
	}
	if n := creates(); n != 0 {
		t.Errorf("%d pre-pull pods created; want none", n)
	}
	r := rollout.Rollout{UpgradeID: "u-1", Phase: rollout.Running, Options: rollout.Options{Prepull: true},
		Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
		Pods: map[string]*rollout.Pod{"web-3": {Name: "web-3", UID: "uid-web-3", Node: "node-1", State: rollout.Pending,
			Containers: plan("web-3", false).Containers}}}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	f.Warm(t.Context(), rollout.Key(r.Workload), 0, raw)
	if n := creates(); n != 0 {
		t.Errorf("%d pre-pull pods created ahead; want none", n)
	}
	if _, err := skipped(plan("web-2", true)); err == nil || creates() != 1 {
		t.Errorf("a container pulling Always: %d pre-pull pods created (%v); want one, the pull under way", creates(), err)
	}
}
