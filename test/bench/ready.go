package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/test/world"
)

// readyWatch stamps, for each pod of a namespace, when the benchmark's
// own watch first saw it Ready with a container on the target digest:
// the kubelet's side of "patched → verified", told apart from the
// project's (the pod.updated, verify's decision, upgrade.succeeded).
type readyWatch struct {
	w *podWatch

	mu     sync.Mutex
	digest string
	at     map[string]time.Time // "namespace/name" → first seen Ready on digest
}

// watchReady starts the watch (watchPods, with a handler of its own);
// target sets the digest once it is known (a pod cannot run it before it
// is pushed).
func watchReady(ctx context.Context, c kubernetes.Interface, ns string) (*readyWatch, error) {
	w, err := watchPods(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	r := &readyWatch{w: w, at: map[string]time.Time{}}
	seen := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			r.observe(p, time.Now())
		}
	}
	if _, err := w.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen,
		UpdateFunc: func(_, cur any) { seen(cur) }}); err != nil {
		w.stop()
		return nil, err
	}
	return r, nil
}

func (w *readyWatch) target(digest string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.digest = digest
}

// observe stamps p at now when it is Ready with a container on the
// target digest for the first time.
func (w *readyWatch) observe(p *corev1.Pod, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	if w.digest == "" || !w.at[key].IsZero() || !readyOn(p, w.digest) {
		return
	}
	w.at[key] = now
}

// readyOn: p is Ready and one of its containers runs digest.
func readyOn(p *corev1.Pod, digest string) bool {
	if p.DeletionTimestamp != nil || !world.PodReady(p) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil && imageref.DigestOf(cs.ImageID) == digest {
			return true
		}
	}
	return false
}

// stamps are the Ready stamps so far, by "namespace/name".
func (w *readyWatch) stamps() map[string]time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]time.Time, len(w.at))
	for k, v := range w.at {
		out[k] = v
	}
	return out
}

func (w *readyWatch) stop() { w.w.stop() }
