package kube_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// TestOwnersCostsOneNamePerOwner: compute-spec asks for the owners of
// every pod of a workload at each of its inputs (a thousand outcomes of a
// thousand pods): the pods of one ReplicaSet cost one map entry and one
// name, not an allocation per pod; a pod without a controller is its own.
func TestOwnersCostsOneNamePerOwner(t *testing.T) {
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = runningPod(i)
	}
	bare := runningPod(1000)
	bare.OwnerReferences = nil
	want := map[string]string{"1b7a4f8e": "ReplicaSet/shop/web-5d8f7c9b4", string(bare.UID): "Pod/shop/" + bare.Name}
	if diff := cmp.Diff(want, kube.Owners(append(pods, bare))); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	allocs := testing.AllocsPerRun(10, func() { kube.Owners(pods) })
	if allocs > 10 {
		t.Errorf("Owners of %d pods of one ReplicaSet: %.0f allocations; want a few, not one per pod", len(pods), allocs)
	}
}
