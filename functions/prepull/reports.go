package prepull

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/pkg/core/pulls"
)

// Reports gives the kubelet's Pulled Events of a pre-pull pod (pulls.Reported
// checks them): the images are on the node at the pull's end, a container
// start and a PLEG relist before the pod's status says so.
type Reports interface {
	Pulled(ctx context.Context, pod *corev1.Pod) ([]corev1.Event, error)
}

// pulledSelector selects the kubelet's Pulled Events.
var pulledSelector = fields.OneTermEqualSelector("reason", pulls.ReasonPulled).String()

// byUID indexes Events by the UID of the object they are about.
const byUID = "involvedObject.uid"

// EventReports reads Pulled Events from an informer of the pre-pull
// namespace's Events (NewEventInformer).
type EventReports struct{ Informer cache.SharedIndexInformer }

var _ Reports = EventReports{}

// NewEventInformer is an informer of the Pulled Events of namespace,
// indexed for EventReports; the caller adds its handlers (WatchEvents) and
// runs it.
func NewEventInformer(client kubernetes.Interface, namespace string) (cache.SharedIndexInformer, error) {
	inf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = pulledSelector }),
	).Core().V1().Events().Informer()
	err := inf.AddIndexers(cache.Indexers{byUID: func(obj any) ([]string, error) {
		if e, ok := obj.(*corev1.Event); ok && e.InvolvedObject.UID != "" {
			return []string{string(e.InvolvedObject.UID)}, nil
		}
		return nil, nil
	}})
	if err != nil {
		return nil, fmt.Errorf("pre-pull: index events: %w", err)
	}
	return inf, nil
}

// Pulled implements Reports.
func (r EventReports) Pulled(_ context.Context, pod *corev1.Pod) ([]corev1.Event, error) {
	objs, err := r.Informer.GetIndexer().ByIndex(byUID, string(pod.UID))
	if err != nil {
		return nil, fmt.Errorf("pre-pull: events of %s: %w", pod.Name, err)
	}
	out := make([]corev1.Event, 0, len(objs))
	for _, o := range objs {
		if e, ok := o.(*corev1.Event); ok {
			out = append(out, *e)
		}
	}
	return out, nil
}

// WatchEvents wakes w's key of a node each time its kubelet reports a pull
// (an Event of the informer NewEventInformer makes).
func WatchEvents(w Waker) cache.ResourceEventHandler {
	wake := func(obj any) {
		if e, ok := obj.(*corev1.Event); ok && e.Reason == pulls.ReasonPulled && e.Source.Host != "" {
			w.Wake(e.Source.Host)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: wake, UpdateFunc: func(_, obj any) { wake(obj) }}
}

// reported reports whether the kubelet said p's pulls are done (Reports);
// an error reading its Events is only logged: the pod's status still says.
func (f *Function) reported(ctx context.Context, p *corev1.Pod) bool {
	if f.d.Reports == nil {
		return false
	}
	evs, err := f.d.Reports.Pulled(ctx, p)
	if err != nil {
		f.d.Log.Warn("pre-pull: the kubelet's pull reports not read", "pod", p.Name, "err", err)
		return false
	}
	return pulls.Reported(p, evs)
}
