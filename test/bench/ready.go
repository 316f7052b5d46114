package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
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
	cancel context.CancelFunc

	mu     sync.Mutex
	digest string
	at     map[string]time.Time // "namespace/name" → first seen Ready on digest
}

// watchReady starts the watch; target sets the digest once it is known
// (a pod cannot run it before it is pushed).
func watchReady(ctx context.Context, c kubernetes.Interface, ns string) (*readyWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	w := &readyWatch{cancel: cancel, at: map[string]time.Time{}}
	seen := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			w.observe(p, time.Now())
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen,
		UpdateFunc: func(_, cur any) { seen(cur) }}); err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("watch pods in %s: not synced", ns)
	}
	return w, nil
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

func (w *readyWatch) stop() { w.cancel() }
