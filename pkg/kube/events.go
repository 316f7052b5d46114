package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Recorder records Kubernetes Events (record.EventRecorder).
type Recorder = record.EventRecorder

// NewRecorder returns an EventRecorder writing Kubernetes Events as
// component (so `kubectl describe` tells the story) until ctx ends.
func NewRecorder(ctx context.Context, client kubernetes.Interface, component string) record.EventRecorder {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	go func() {
		<-ctx.Done()
		b.Shutdown()
	}()
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})
}

// NoEvents is a Recorder that records nothing: the default of a function
// given no Recorder.
type NoEvents struct{}

var _ Recorder = NoEvents{}

// Event records nothing.
func (NoEvents) Event(runtime.Object, string, string, string) {}

// Eventf records nothing.
func (NoEvents) Eventf(runtime.Object, string, string, string, ...any) {}

// AnnotatedEventf records nothing.
func (NoEvents) AnnotatedEventf(runtime.Object, map[string]string, string, string, string, ...any) {}
