package kube

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/inplace-dev/inplace/events"
)

// PodsOf lists a workload's pods by name whatever changed since its last
// list: a pod updated, one replaced by a pod of another name (as many
// pods as before), one added, one removed, all removed.
func TestPodsOfKeepsNameOrder(t *testing.T) {
	c, rs := webCache(t)
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

// owned lists, from scratch, what PodsOf must return for rs's Deployment:
// every pod the store holds under rs, live, by name, as "name@rv".
func owned(t *testing.T, c *Cache, rs *appsv1.ReplicaSet) []string {
	t.Helper()
	out := []string{}
	for _, o := range c.pods.GetIndexer().List() {
		p := o.(*corev1.Pod)
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Name != rs.Name || p.Namespace != rs.Namespace ||
			p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p.Name+"@"+p.ResourceVersion)
	}
	slices.Sort(out)
	return out
}

func listed(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name+"@"+p.ResourceVersion)
	}
	return out
}

// PodsOf returns the store's current object of each pod after every kind
// of change: an update, a pod terminating, one finished, one moved to
// another owner, one added back; and a caller changing the slice it got
// does not change the next read.
func TestPodsOfReadsThePodsAsTheStoreHoldsThem(t *testing.T) {
	c, rs := webCache(t)
	other := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api-1", UID: "rs-2"}}
	pods := c.pods.GetIndexer()
	for i := range 5 {
		if err := pods.Add(benchOwnedPod(i, i+1, rs)); err != nil {
			t.Fatal(err)
		}
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	rv := 100
	changed := func(i int, change func(*corev1.Pod)) func() error {
		return func() error {
			rv++
			p := benchOwnedPod(i, rv, rs)
			change(p)
			return pods.Update(p)
		}
	}
	for _, step := range []struct {
		name   string
		change func() error
	}{
		{"first list", func() error { return nil }},
		{"a pod updated", changed(2, func(*corev1.Pod) {})},
		{"the same pod updated again", changed(2, func(*corev1.Pod) {})},
		{"two pods updated", func() error {
			if err := changed(0, func(*corev1.Pod) {})(); err != nil {
				return err
			}
			return changed(4, func(*corev1.Pod) {})()
		}},
		{"a pod terminating", changed(1, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} })},
		{"a pod finished", changed(3, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })},
		{"a pod running again", changed(3, func(*corev1.Pod) {})},
		{"a pod moved to another owner", changed(4, func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: other.Name, UID: other.UID, Controller: ptr.To(true)}}
		})},
		{"the pod back", changed(4, func(*corev1.Pod) {})},
		{"a pod added and removed between reads", func() error {
			if err := pods.Add(benchOwnedPod(9, 9, rs)); err != nil {
				return err
			}
			return pods.Delete(benchOwnedPod(9, 9, rs))
		}},
		{"a pod updated after the reader changed its list", changed(0, func(*corev1.Pod) {})},
	} {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got, err := c.PodsOf(ref)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(owned(t, c, rs), listed(got)); diff != "" {
			t.Errorf("%s: PodsOf (-want +got):\n%s", step.name, diff)
		}
		for _, p := range got {
			if cur, _, _ := pods.GetByKey(p.Namespace + "/" + p.Name); cur != p {
				t.Errorf("%s: PodsOf gave %s@%s, not the store's object", step.name, p.Name, p.ResourceVersion)
			}
		}
		slices.Reverse(got) // the caller's own slice
		got[0] = nil
	}
}

// Readers and writers at once (go test -race): once the writers stop, a
// read returns exactly what the store holds.
func TestPodsOfWhileThePodsChange(t *testing.T) {
	c, rs := webCache(t)
	pods := c.pods.GetIndexer()
	const n = 50
	for i := range n {
		if err := pods.Add(benchOwnedPod(i, 1, rs)); err != nil {
			t.Fatal(err)
		}
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				p := benchOwnedPod((i*7+w)%n, 2+i*4+w, rs)
				var err error
				switch i % 10 {
				case 3:
					err = pods.Delete(p)
				case 4:
					err = pods.Add(p)
				default:
					err = pods.Update(p)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				if _, err := c.PodsOf(ref); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := c.PodsOf(ref)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(owned(t, c, rs), listed(got)); diff != "" {
		t.Errorf("PodsOf after the writers stopped (-want +got):\n%s", diff)
	}
}
