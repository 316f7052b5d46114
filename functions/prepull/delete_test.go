package prepull

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
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

// A 409 to the delete is a failed UID precondition only when the name
// holds another pod (or none): the API server's own conflict (the fault
// suite injects them on writes) leaves the pod there, and the next try
// deletes it rather than taking it for gone. TestAPIServerFaults left a
// pre-pull pod behind when a burst hit this delete.
func TestAConflictToTheDeleteIsTriedAgain(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "prepull-node-1-0", Namespace: "inplace-system", UID: "uid-1"}}
	client := fake.NewClientset(pod.DeepCopy())
	conflicts := 1
	client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name, errInjected)
	})
	f := New(Deps{Client: client})
	if err := f.delete(t.Context(), pod); !apierrors.IsConflict(err) {
		t.Fatalf("delete answered 409 with the pod still there: %v; want the conflict, to try again", err)
	}
	if err := f.delete(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods(pod.Namespace).Get(t.Context(), pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pre-pull pod after two deletes: %v; want it gone", err)
	}

	// The name holds another pod now: the precondition failed because ours
	// is gone, and that one is not deleted.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: "uid-2"}}
	client = fake.NewClientset(other.DeepCopy())
	client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name, errInjected)
	})
	f = New(Deps{Client: client})
	if err := f.delete(t.Context(), pod); err != nil {
		t.Errorf("delete of a pod whose name holds another: %v; want done", err)
	}
}

var errInjected = errors.New("injected")
