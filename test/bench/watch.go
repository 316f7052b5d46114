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

// podWatch follows the pods of one namespace with one watch (as a
// controller would): waiting on it costs the API server nothing per check,
// unlike polling with lists, which at a thousand pods would weigh on what
// is measured.
type podWatch struct {
	inf    cache.SharedIndexInformer
	cancel context.CancelFunc

	mu   sync.Mutex
	wake chan struct{}
}

func watchPods(ctx context.Context, c kubernetes.Interface, ns string) (*podWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	w := &podWatch{inf: f.Core().V1().Pods().Informer(), cancel: cancel, wake: make(chan struct{})}
	poke := func(any) { w.poke() }
	_, err := w.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke, DeleteFunc: poke,
		UpdateFunc: func(_, cur any) { w.poke() }})
	if err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), w.inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("watch pods in %s: not synced", ns)
	}
	return w, nil
}

func (w *podWatch) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.wake)
	w.wake = make(chan struct{})
}

// pods lists the namespace's pods as last seen.
func (w *podWatch) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range w.inf.GetStore().List() {
		out = append(out, o.(*corev1.Pod))
	}
	return out
}

// until waits for cond over the pods, looking again at every change.
func (w *podWatch) until(ctx context.Context, limit time.Duration, what string, cond func([]*corev1.Pod) bool) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		w.mu.Lock()
		wake := w.wake
		w.mu.Unlock()
		if cond(w.pods()) {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

func (w *podWatch) stop() { w.cancel() }

// allReadyOn: n pods of app, none terminating, each Ready on digest (any
// digest when empty).
func allReadyOn(app string, n int, digest string) func([]*corev1.Pod) bool {
	return func(pods []*corev1.Pod) bool {
		on := 0
		for _, p := range pods {
			if p.Labels["app"] != app {
				continue
			}
			if p.DeletionTimestamp != nil {
				return false
			}
			cs := world.ContainerStatus(p, "app")
			if cs == nil || !world.PodReady(p) || (digest != "" && imageref.DigestOf(cs.ImageID) != digest) {
				return false
			}
			on++
		}
		return on == n
	}
}
