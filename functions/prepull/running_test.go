package prepull

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/core/settle"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// A node whose status.images does not list the planned image but runs a
// pod on its digest has it: no pre-pull pod is made, by the plan or ahead
// (Warm), and the plan is marked pre-pulled. Only a container running the
// digest, in a pod bound to that node, as the pod informer has its status,
// says so: another digest, another repository, another node, a container
// terminated or waiting on the digest, or an annotation naming it, and the
// node is pre-pulled by a pod.
func TestAPodRunningTheDigestOnTheNodeIsPresence(t *testing.T) {
	const (
		digest = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
		other  = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	)
	target := "r.example/shop/web:1.3.0@" + digest
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	pod := func(node, imageID string, state corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "uid-web-0"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "r.example/shop/web:1.3.0"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
				Image: "r.example/shop/web:1.3.0", ImageID: imageID, State: state}}}}
	}
	annotated := pod("node-1", "r.example/shop/web@"+other, running)
	annotated.Annotations = map[string]string{"inplace.dev/state": `{"imageID":"r.example/shop/web@` + digest + `"}`}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // Skipped; "" when a pre-pull pod is made
	}{
		{"running the digest on the node", pod("node-1", "r.example/shop/web@"+digest, running), SkipRunsOnNode},
		{"docker-pullable imageID", pod("node-1", "docker-pullable://r.example/shop/web@"+digest, running), SkipRunsOnNode},
		{"another digest", pod("node-1", "r.example/shop/web@"+other, running), ""},
		{"another repository", pod("node-1", "r.example/shop/api@"+digest, running), ""},
		{"another node", pod("node-2", "r.example/shop/web@"+digest, running), ""},
		{"not bound", pod("", "r.example/shop/web@"+digest, running), ""},
		{"terminated on the digest", pod("node-1", "r.example/shop/web@"+digest, terminated), ""},
		{"waiting on the digest", pod("node-1", "r.example/shop/web@"+digest, waiting), ""},
		{"an annotation naming the digest", annotated, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}} // lists nothing
			client := fake.NewClientset(node, tc.pod)
			c, err := kube.NewPodCache(client, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			cfg := config.StandardDefaults()
			f := New(Deps{Client: client, Config: config.NewStore(cfg, nil), Running: c})
			plan := events.Plan{UpgradeID: "u-1", Prepull: true, Target: target,
				Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1.2.0", ToImage: target}},
				Owner:      events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
				Pod:        events.PodRef{Namespace: "shop", Name: "web-1", UID: "uid-web-1", Node: "node-1"}}
			r := rollout.Rollout{UpgradeID: "u-1", Phase: rollout.Running, Options: rollout.Options{Prepull: true}, Workload: plan.Owner,
				Pods: map[string]*rollout.Pod{"web-1": {Name: "web-1", UID: "uid-web-1", Node: "node-1", State: rollout.Pending,
					Containers: plan.Containers}}}
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			f.Warm(t.Context(), rollout.Key(r.Workload), 0, raw)
			ahead := podCreates(client)
			e, err := events.New("plan-web-1", events.UpgradePlanned, events.Source("test"), plan.Pod.String(), plan)
			if err != nil {
				t.Fatal(err)
			}
			outs, err := f.handle(t.Context(), e, plan)
			if tc.want == "" {
				if k, _ := settle.Classify(err); k != settle.Later || podCreates(client) != 1 {
					t.Errorf("pre-pull pods created: %d ahead, %d in all (%v); want one, the pull under way", ahead, podCreates(client), err)
				}
				return
			}
			if err != nil || len(outs) != 1 {
				t.Fatalf("handle: %d events, %v; want image.prepulled", len(outs), err)
			}
			d, err := events.As[events.PrepulledData](outs[0])
			if err != nil || d.Skipped != tc.want || outs[0].Type() != events.ImagePrepulled {
				t.Errorf("got %s skipped %q (%v); want %s skipped %q", outs[0].Type(), d.Skipped, err, events.ImagePrepulled, tc.want)
			}
			if n := podCreates(client); n != 0 {
				t.Errorf("%d pre-pull pods created; want none", n)
			}
		})
	}
}

// podCreates counts the pods created through client.
func podCreates(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}
