package reconfig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sort"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/inplace-dev/inplace/events"
)

// HashAnnotation holds, in the watcher's cache only, the hash of a
// ConfigMap's or Secret's data (the data itself is dropped on arrival).
const HashAnnotation = "inplace.dev/data-hash"

// Publisher puts an event on the bus.
type Publisher interface {
	Publish(ctx context.Context, e cloudevents.Event) error
}

// Listers read the workloads that may opt in (kube.Cache's).
type Listers struct {
	Deployments  appslisters.DeploymentLister
	StatefulSets appslisters.StatefulSetLister
	DaemonSets   appslisters.DaemonSetLister
}

// change is one ConfigMap's or Secret's data changing to hash.
type change struct {
	Object
	Namespace, UID, Hash string
}

// Watcher publishes restart requests when opted-in workloads' ConfigMaps
// or Secrets change.
type Watcher struct {
	factory informers.SharedInformerFactory
	synced  []cache.InformerSynced
	work    Listers
	pub     Publisher
	log     *slog.Logger
	queue   workqueue.TypedRateLimitingInterface[change]
}

// New builds the watcher; it needs list and watch on configmaps, and on
// secrets when secrets is set (see CanWatchSecrets).
func New(client kubernetes.Interface, work Listers, pub Publisher, secrets bool, log *slog.Logger) (*Watcher, error) {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(keepHash))
	w := &Watcher{factory: f, work: work, pub: pub, log: log,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[change]())}
	watched := map[string]cache.SharedIndexInformer{ConfigMap: f.Core().V1().ConfigMaps().Informer()}
	if secrets {
		watched[Secret] = f.Core().V1().Secrets().Informer()
	}
	for kind, inf := range watched {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, cur any) { w.observe(kind, old, cur) }}); err != nil {
			return nil, fmt.Errorf("reconfig: %s handler: %w", kind, err)
		}
		w.synced = append(w.synced, inf.HasSynced)
	}
	return w, nil
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	defer w.queue.ShutDown()
	w.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), w.synced...) {
		return
	}
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	for w.next(ctx) {
	}
	w.factory.Shutdown()
}

// observe queues a change of data (not of metadata alone).
func (w *Watcher) observe(kind string, old, cur any) {
	o, ok1 := old.(metav1.Object)
	c, ok2 := cur.(metav1.Object)
	if !ok1 || !ok2 || o.GetAnnotations()[HashAnnotation] == c.GetAnnotations()[HashAnnotation] {
		return
	}
	w.queue.Add(change{Object: Object{Kind: kind, Name: c.GetName()}, Namespace: c.GetNamespace(),
		UID: string(c.GetUID()), Hash: c.GetAnnotations()[HashAnnotation]})
}

func (w *Watcher) next(ctx context.Context) bool {
	ch, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(ch)
	if err := w.handle(ctx, ch); err != nil {
		w.log.Warn("config change: publishing restart requests failed; retrying", "object", ch.Object.String(),
			"namespace", ch.Namespace, "err", err)
		w.queue.AddRateLimited(ch)
		return true
	}
	w.queue.Forget(ch)
	return true
}

// handle publishes a restart request for each workload that wants one.
func (w *Watcher) handle(ctx context.Context, ch change) error {
	reqs, err := w.requests(ch)
	if err != nil {
		return err
	}
	for _, r := range reqs {
		id := events.DeriveID(ch.UID+"/"+ch.Hash, events.ContainerRestartRequested, r.Target.String())
		e, err := events.New(id, events.ContainerRestartRequested, events.Source("reconfig"), r.Target.String(), r)
		if err != nil {
			return err
		}
		if err := w.pub.Publish(ctx, e); err != nil {
			return err
		}
		w.log.Info("config changed: restart requested", "object", ch.Object.String(), "workload", r.Target.String(),
			"containers", r.Containers)
	}
	return nil
}

// requests are the restart requests ch makes, one per workload of its
// namespace whose restart-on-change names it (or references it).
func (w *Watcher) requests(ch change) ([]events.RestartRequestData, error) {
	var out []events.RestartRequestData
	add := func(kind string, meta metav1.ObjectMeta, spec *corev1.PodSpec) {
		v, ok := meta.Annotations[Annotation]
		if !ok {
			return
		}
		names, ok := Wants(v, spec, ch.Object)
		if !ok {
			return
		}
		out = append(out, events.RestartRequestData{
			Target:     events.ObjectRef{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, UID: string(meta.UID)},
			Containers: names, Reason: fmt.Sprintf("%s changed", ch.Object)})
	}
	deps, err := w.work.Deployments.Deployments(ch.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		add("Deployment", d.ObjectMeta, &d.Spec.Template.Spec)
	}
	sts, err := w.work.StatefulSets.StatefulSets(ch.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, s := range sts {
		add("StatefulSet", s.ObjectMeta, &s.Spec.Template.Spec)
	}
	dss, err := w.work.DaemonSets.DaemonSets(ch.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	for _, d := range dss {
		add("DaemonSet", d.ObjectMeta, &d.Spec.Template.Spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target.String() < out[j].Target.String() })
	return out, nil
}

// keepHash keeps of a ConfigMap or Secret its name, namespace, UID,
// resourceVersion and the hash of its data: the data never stays in memory.
func keepHash(obj any) (any, error) {
	h := sha256.New()
	var meta metav1.ObjectMeta
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		meta = o.ObjectMeta
		hashMap(h.Write, o.Data)
		for _, k := range sortedKeys(o.BinaryData) {
			h.Write([]byte("b:" + k + "\x00"))
			h.Write(o.BinaryData[k])
			h.Write([]byte{0})
		}
		out := &corev1.ConfigMap{ObjectMeta: slim(meta, h.Sum(nil))}
		return out, nil
	case *corev1.Secret:
		meta = o.ObjectMeta
		for _, k := range sortedKeys(o.Data) {
			h.Write([]byte(k + "\x00"))
			h.Write(o.Data[k])
			h.Write([]byte{0})
		}
		return &corev1.Secret{ObjectMeta: slim(meta, h.Sum(nil))}, nil
	}
	return obj, nil
}

func slim(m metav1.ObjectMeta, sum []byte) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Annotations: map[string]string{HashAnnotation: hex.EncodeToString(sum)}}
}

func hashMap(write func([]byte) (int, error), m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		_, _ = write([]byte(k + "\x00" + m[k] + "\x00"))
	}
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
