package kube

import (
	"fmt"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
)

// BenchmarkPodsOf is compute-spec's read of a Deployment's n pods from the
// cache at one outcome, one pod changed since the last read (the pod whose
// outcome arrived).
func BenchmarkPodsOf(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c, rs := webCache(b)
			pods := make([]*corev1.Pod, n)
			for i := range pods {
				pods[i] = benchOwnedPod(i, i+1, rs)
				if err := c.pods.GetIndexer().Add(pods[i]); err != nil {
					b.Fatal(err)
				}
			}
			ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
			rv := n
			for i := 0; b.Loop(); i++ {
				rv++
				if err := c.pods.GetIndexer().Update(benchOwnedPod(i%n, rv, rs)); err != nil {
					b.Fatal(err)
				}
				got, err := c.PodsOf(ref)
				if err != nil || len(got) != n {
					b.Fatalf("PodsOf: %d pods, %v", len(got), err)
				}
			}
		})
	}
}

// webCache is a cache holding the ReplicaSet web-7d9f of the Deployment
// shop/web, and no pod yet.
func webCache(tb testing.TB) (*Cache, *appsv1.ReplicaSet) {
	tb.Helper()
	c, err := NewCache(fake.NewClientset(), 0)
	if err != nil {
		tb.Fatal(err)
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-7d9f", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", UID: "d-uid", Controller: ptr.To(true)}}}}
	if err := c.replicaSets.GetIndexer().Add(rs); err != nil {
		tb.Fatal(err)
	}
	return c, rs
}

func benchOwnedPod(i, rv int, rs *appsv1.ReplicaSet) *corev1.Pod {
	name := fmt.Sprintf("web-7d9f-%05d", (i*7919)%100000)
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name),
		ResourceVersion: strconv.Itoa(rv),
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "r.example/shop/web:1.2.0"}}}}
}
