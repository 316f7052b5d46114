package prepull

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

type reports []corev1.Event

func (r reports) Pulled(context.Context, *corev1.Pod) ([]corev1.Event, error) { return r, nil }

// A pre-pull pod whose container the kubelet has not started yet, but whose
// pull it reported done (its Pulled Event): the plan is told its image is
// pre-pulled, and the pod is deleted, without waiting for the container to
// start and a relist to show it; an Event that is not the kubelet's of that
// node leaves the plan waiting.
func TestAPullReportedByTheKubeletIsDone(t *testing.T) {
	cfg := config.StandardDefaults()
	image := "r.example/shop/web:1.3.0@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	pp := podFor(cfg.PrepullNamespace, slotName("node-1", 0), "node-1", "amd64", []string{image}, time.Now())
	pp.UID, pp.CreationTimestamp = "uid-pull-1", metav1.Now()
	pp.Status.Phase = corev1.PodPending
	pp.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pull-0", Image: image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	pulledBy := func(host string) corev1.Event {
		return corev1.Event{Reason: "Pulled", Type: corev1.EventTypeNormal,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pp.Namespace, Name: pp.Name, UID: pp.UID,
				FieldPath: "spec.containers{pull-0}"},
			Source:  corev1.EventSource{Component: "kubelet", Host: host},
			Message: fmt.Sprintf("Successfully pulled image %q in 4.8s (4.8s including waiting). Image size: 1 bytes.", image)}
	}
	plan := events.Plan{UpgradeID: "u-1", Prepull: true, Target: image,
		Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1.2.0", ToImage: image}},
		Owner:      events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-web"},
		Pod:        events.PodRef{Namespace: "shop", Name: "web-0", UID: "uid-web-0", Node: "node-1"}}
	e, err := events.New("plan-web-0", events.UpgradePlanned, events.Source("test"), plan.Pod.String(), plan)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		reports     Reports
		wantPulled  bool
		wantDeleted bool
	}{
		{"reported by the node's kubelet", reports{pulledBy("node-1")}, true, true},
		{"reported by another node's kubelet", reports{pulledBy("node-2")}, false, false},
		{"no reports read", nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}} // lists nothing yet
			client := fake.NewClientset(pp.DeepCopy(), node)
			f := New(Deps{Client: client, Config: config.NewStore(cfg, nil), Reports: tt.reports})
			outs, err := f.handle(t.Context(), e, plan)
			if tt.wantPulled {
				if err != nil || len(outs) != 1 || outs[0].Type() != events.ImagePrepulled {
					t.Fatalf("handle = %d events, %v; want image.prepulled", len(outs), err)
				}
				if d, err := events.As[events.PrepulledData](outs[0]); err != nil || d.Skipped != "" {
					t.Errorf("prepulled skipped %q, %v; want a pull", d.Skipped, err)
				}
			} else if k, _ := settle.Classify(err); k != settle.Later || len(outs) != 0 {
				t.Errorf("handle = %d events, %v; want not yet", len(outs), err)
			}
			deleted := false
			for _, a := range client.Actions() {
				deleted = deleted || a.GetVerb() == "delete"
			}
			if deleted != tt.wantDeleted {
				t.Errorf("pre-pull pod deleted: %v, want %v", deleted, tt.wantDeleted)
			}
		})
	}
}
