package prepull

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The plans sharing a pre-pull pod each end it; only the first deletes it
// (the others, reading a cache that still shows it, were refused with 404
// before), and a pod already marked deleted is not deleted again.
func TestAPrePullPodIsDeletedOnce(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prepull-node-1-0", Namespace: "inplace-system", UID: "uid-1"}}
	gone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prepull-node-1-1", Namespace: "inplace-system", UID: "uid-2",
		DeletionTimestamp: &metav1.Time{}}}
	client := fake.NewClientset(pod.DeepCopy(), gone.DeepCopy())
	f := New(Deps{Client: client})
	for range 3 {
		if err := f.delete(t.Context(), pod); err != nil {
			t.Fatal(err)
		}
		if err := f.delete(t.Context(), gone); err != nil {
			t.Fatal(err)
		}
	}
	deletes := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("%d deletes; want 1", deletes)
	}
}
