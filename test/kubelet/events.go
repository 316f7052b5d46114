package kubelet

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
)

// The kubelet's defaults for its Events client (KubeletConfiguration's
// eventRecordQPS and eventBurst, v1.35).
const (
	eventRecordQPS = 50
	eventBurst     = 100
)

// newBroadcaster is an Event broadcaster as the simulated components use
// it. Each simulated node has one of its own, as each kubelet does: one
// broadcaster writes its Events one at a time and drops what comes while
// 1,000 wait (client-go's maxQueuedEvents), so a broadcaster shared by a
// pool would drop Events of a busy pool that real kubelets write, and drop
// more of them the faster its pods restart.
func newBroadcaster() record.EventBroadcaster {
	return record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{BurstSize: 100, QPS: 1}))
}

// startEvents starts writing the Events the scheduler and each node record.
func (k *Kubelet) startEvents() {
	k.broadcaster.StartRecordingToSink(newSink(k.client, &k.activity, false))
	for _, name := range k.nodeOrder {
		k.nodes[name].events.StartRecordingToSink(newSink(k.client, &k.activity, true))
	}
}

// stopEvents stops the scheduler's and every node's broadcaster.
func (k *Kubelet) stopEvents() {
	k.broadcaster.Shutdown()
	for _, name := range k.nodeOrder {
		k.nodes[name].events.Shutdown()
	}
}

// eventActivity is when the pool last recorded or wrote an Event.
type eventActivity struct{ last atomic.Int64 } // UnixNano

func (a *eventActivity) touch() { a.last.Store(time.Now().UnixNano()) }

func (a *eventActivity) since() time.Duration {
	return time.Duration(time.Now().UnixNano() - a.last.Load())
}

// EventsWritten waits until the pool has neither recorded nor written an
// Event for quiet: every Event its nodes and scheduler recorded is written
// (or dropped), because a broadcaster with Events queued writes one at
// least every 1/eventRecordQPS. A benchmark waits for it before starting a
// clock, so that one run's Events are not written during the next.
func (k *Kubelet) EventsWritten(ctx context.Context, quiet time.Duration) error {
	return wait.PollUntilContextCancel(ctx, quiet/4, true, func(context.Context) (bool, error) {
		return k.activity.since() >= quiet, nil
	})
}

// recorder notes in the pool's activity every Event it records.
type recorder struct {
	record.EventRecorder
	act *eventActivity
}

func (r recorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.act.touch()
	r.EventRecorder.Event(object, eventtype, reason, message)
}

func (r recorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.act.touch()
	r.EventRecorder.Eventf(object, eventtype, reason, messageFmt, args...)
}

func (r recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.act.touch()
	r.EventRecorder.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
}

// sink writes Events through the API server and notes each write in the
// pool's activity. A node's sink writes at the pace the kubelet's Events
// client allows (eventRecordQPS, bursts of eventBurst); the scheduler's
// has no limit.
type sink struct {
	record.EventSink
	limiter flowcontrol.RateLimiter // nil: none
	act     *eventActivity
}

func newSink(client kubernetes.Interface, act *eventActivity, limited bool) *sink {
	s := &sink{EventSink: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}, act: act}
	if limited {
		s.limiter = flowcontrol.NewTokenBucketRateLimiter(eventRecordQPS, eventBurst)
	}
	return s
}

func (s *sink) wait() {
	if s.limiter != nil {
		s.limiter.Accept()
	}
}

func (s *sink) Create(e *corev1.Event) (*corev1.Event, error) {
	s.wait()
	defer s.act.touch()
	return s.EventSink.Create(e)
}

func (s *sink) Update(e *corev1.Event) (*corev1.Event, error) {
	s.wait()
	defer s.act.touch()
	return s.EventSink.Update(e)
}

func (s *sink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	s.wait()
	defer s.act.touch()
	return s.EventSink.Patch(e, data)
}
