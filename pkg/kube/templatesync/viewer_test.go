package templatesync_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubectl/pkg/polymorphichelpers"
)

// seen is one version of the workload as `kubectl rollout status` shows it.
type seen struct {
	at       time.Time
	msg      string
	done     bool
	err      error
	updated  int32
	strategy string
}

// statusWatch runs kubectl's own rollout-status viewer on every version of
// the workload the API server sends while the template is synced.
type statusWatch struct {
	f      *fixture
	before int32
	mu     sync.Mutex
	all    []seen
	stop   context.CancelFunc
	done   chan struct{}
}

// watchStatus starts watching from the workload as it is now.
func (f *fixture) watchStatus() *statusWatch {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.t.Context())
	obj, rv := f.object(ctx)
	sw := &statusWatch{f: f, before: updatedOf(obj), stop: cancel, done: make(chan struct{})}
	sw.add(obj)
	w, err := f.watch(ctx, rv)
	if err != nil {
		f.t.Fatal(err)
	}
	go func() {
		defer close(sw.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Modified {
				sw.add(ev.Object)
			}
		}
	}()
	return sw
}

func (f *fixture) object(ctx context.Context) (runtime.Object, string) {
	var obj interface {
		runtime.Object
		GetResourceVersion() string
	}
	var err error
	switch f.kind {
	case "Deployment":
		obj, err = f.c.AppsV1().Deployments(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	case "StatefulSet":
		obj, err = f.c.AppsV1().StatefulSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	case "DaemonSet":
		obj, err = f.c.AppsV1().DaemonSets(f.ns).Get(ctx, f.name, metav1.GetOptions{})
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return obj, obj.GetResourceVersion()
}

func (f *fixture) watch(ctx context.Context, rv string) (watch.Interface, error) {
	opts := metav1.ListOptions{FieldSelector: "metadata.name=" + f.name, ResourceVersion: rv}
	switch f.kind {
	case "Deployment":
		return f.c.AppsV1().Deployments(f.ns).Watch(ctx, opts)
	case "StatefulSet":
		return f.c.AppsV1().StatefulSets(f.ns).Watch(ctx, opts)
	}
	return f.c.AppsV1().DaemonSets(f.ns).Watch(ctx, opts)
}

func updatedOf(obj runtime.Object) int32 {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Status.UpdatedReplicas
	case *appsv1.StatefulSet:
		return o.Status.UpdatedReplicas
	case *appsv1.DaemonSet:
		return o.Status.UpdatedNumberScheduled
	}
	return -1
}

func strategyOf(obj runtime.Object) string {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return string(o.Spec.UpdateStrategy.Type)
	case *appsv1.DaemonSet:
		return string(o.Spec.UpdateStrategy.Type)
	}
	return ""
}

func (sw *statusWatch) add(obj runtime.Object) {
	s := seen{at: time.Now(), updated: updatedOf(obj), strategy: strategyOf(obj)}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err == nil {
		var viewer polymorphichelpers.StatusViewer
		viewer, err = polymorphichelpers.StatusViewerFor(schema.GroupKind{Group: "apps", Kind: sw.f.kind})
		if err == nil {
			s.msg, s.done, s.err = viewer.Status(&unstructured.Unstructured{Object: u}, 0)
		}
	}
	sw.mu.Lock()
	sw.all = append(sw.all, s)
	sw.mu.Unlock()
}

// finish stops watching and reports: whether kubectl's viewer ever failed,
// and for how long it counted fewer pods updated than before the sync.
func (sw *statusWatch) finish() (failed []string, fewer time.Duration, versions int) {
	sw.stop()
	<-sw.done
	sw.mu.Lock()
	defer sw.mu.Unlock()
	var since time.Time
	for _, s := range sw.all {
		if s.err != nil {
			failed = append(failed, s.err.Error())
		}
		switch {
		case s.updated < sw.before && since.IsZero():
			since = s.at
		case s.updated >= sw.before && !since.IsZero():
			fewer += s.at.Sub(since)
			since = time.Time{}
		}
	}
	if !since.IsZero() {
		fewer += time.Since(since)
	}
	return failed, fewer, len(sw.all)
}

// log writes every version seen, for the measurement in docs/workloads.md.
func (sw *statusWatch) log(t *testing.T) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	var b strings.Builder
	for _, s := range sw.all {
		fmt.Fprintf(&b, "%s updated=%d %s done=%v err=%v %s", s.at.Format("15:04:05.000"), s.updated, s.strategy, s.done, s.err, s.msg)
		if !strings.HasSuffix(s.msg, "\n") {
			b.WriteString("\n")
		}
	}
	t.Logf("rollout status during the sync (before: %d updated):\n%s", sw.before, b.String())
}

// strategies are the update strategy types the workload showed.
func (sw *statusWatch) strategies() map[string]bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	out := map[string]bool{}
	for _, s := range sw.all {
		out[s.strategy] = true
	}
	return out
}
