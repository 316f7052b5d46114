package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
)

// PodsOf lists a workload's pods by name whatever changed since its last
// list: a pod updated, one replaced by a pod of another name (as many
// pods as before), one added, one removed, all removed.
func TestPodsOfKeepsNameOrder(t *testing.T) {
	c, err := NewCache(fake.NewClientset(), 0)
	if err != nil {
		t.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-7d9f", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "d-uid", Controller: ptr.To(true)}}}}
	if err := c.replicaSets.GetIndexer().Add(rs); err != nil {
		t.Fatal(err)
	}
	pods := c.pods.GetIndexer()
	for _, i := range []int{3, 1, 4, 2} {
		if err := pods.Add(benchOwnedPod(i, i, rs)); err != nil {
			t.Fatal(err)
		}
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	for _, step := range []struct {
		name   string
		change func() error
		want   []int
	}{
		{"first list", func() error { return nil }, []int{1, 2, 3, 4}},
		{"a pod updated", func() error { return pods.Update(benchOwnedPod(2, 9, rs)) }, []int{1, 2, 3, 4}},
		{"a pod replaced by another name", func() error {
			if err := pods.Delete(benchOwnedPod(3, 3, rs)); err != nil {
				return err
			}
			return pods.Add(benchOwnedPod(0, 10, rs))
		}, []int{0, 1, 2, 4}},
		{"a pod added", func() error { return pods.Add(benchOwnedPod(5, 11, rs)) }, []int{0, 1, 2, 4, 5}},
		{"a pod removed", func() error { return pods.Delete(benchOwnedPod(1, 1, rs)) }, []int{0, 2, 4, 5}},
		{"the same pods", func() error { return nil }, []int{0, 2, 4, 5}},
		{"every pod removed", func() error {
			for _, i := range []int{0, 2, 4, 5} {
				if err := pods.Delete(benchOwnedPod(i, 0, rs)); err != nil {
					return err
				}
			}
			return nil
		}, []int{}},
		{"a pod again", func() error { return pods.Add(benchOwnedPod(7, 12, rs)) }, []int{7}},
	} {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got, err := c.PodsOf(ref)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		gotNames, wantNames := []string{}, []string{}
		for _, p := range got {
			gotNames = append(gotNames, p.Name)
		}
		for _, i := range step.want {
			wantNames = append(wantNames, benchOwnedPod(i, 0, rs).Name)
		}
		if diff := cmp.Diff(wantNames, gotNames); diff != "" {
			t.Errorf("%s: PodsOf names (-want +got):\n%s", step.name, diff)
		}
	}
}
