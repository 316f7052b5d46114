package kubelet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/inplace-dev/inplace/test/eventually"
)

// eventWrites counts the Events a fake API server is asked to create, by
// the node they come from.
type eventWrites struct {
	mu     sync.Mutex
	byNode map[string]int
}

func (w *eventWrites) count(node string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byNode[node]
}

func newEventPool(t *testing.T, nodes int) (*Kubelet, *eventWrites) {
	t.Helper()
	client := fake.NewClientset()
	w := &eventWrites{byNode: map[string]int{}}
	client.PrependReactor("create", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		e := a.(k8stesting.CreateAction).GetObject().(*corev1.Event)
		w.mu.Lock()
		w.byNode[e.Source.Host]++
		w.mu.Unlock()
		return true, e, nil
	})
	k, err := New(client, Options{Nodes: nodes, Resolver: memResolver{}})
	if err != nil {
		t.Fatal(err)
	}
	k.startEvents()
	t.Cleanup(k.stopEvents)
	return k, w
}

func eventPod(i int) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: fmt.Sprintf("p-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}
}

// Each simulated node writes its own Events at the kubelet's pace, as a
// kubelet does: a node with a backlog (past eventBurst) does not hold up
// another node's, and EventsWritten returns once every recorded Event is
// written.
func TestNodesWriteTheirOwnEvents(t *testing.T) {
	k, w := newEventPool(t, 2)
	busy, quiet := k.nodes[k.nodeOrder[0]], k.nodes[k.nodeOrder[1]]
	const backlog = eventBurst + eventRecordQPS/2 // half a second past the burst
	start := time.Now()
	for i := range backlog {
		busy.record(eventPod(i), corev1.EventTypeNormal, "Started", "Started container app")
	}
	for i := range 10 {
		quiet.record(eventPod(1000+i), corev1.EventTypeNormal, "Started", "Started container app")
	}
	eventually.Until(t, 30*time.Second, "node "+quiet.name+"'s 10 Events written", func() bool { return w.count(quiet.name) >= 10 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n := w.count(busy.name); n >= backlog {
		t.Errorf("node %s's 10 Events were written after node %s's whole backlog (%d): the nodes share one queue", quiet.name, busy.name, n)
	}
	if err := k.EventsWritten(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := w.count(busy.name); n != backlog {
		t.Errorf("EventsWritten returned with %d of node %s's %d Events written", n, busy.name, backlog)
	}
	// eventBurst at once, the rest at eventRecordQPS: at least half a second.
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("%d Events of one node written in %v: faster than the kubelet's %d/s after a burst of %d", backlog, took, eventRecordQPS, eventBurst)
	}
}

// EventsWritten returns at once for a pool that records nothing and waits
// out the quiet period after the last Event.
func TestEventsWrittenWaitsForQuiet(t *testing.T) {
	k, _ := newEventPool(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := k.EventsWritten(ctx, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	k.nodes[k.nodeOrder[0]].record(eventPod(1), corev1.EventTypeNormal, "Killing", "Stopping container app")
	start := time.Now()
	if err := k.EventsWritten(ctx, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("EventsWritten returned %v after an Event, within its quiet period of 300ms", took)
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	k.nodes[k.nodeOrder[0]].record(eventPod(2), corev1.EventTypeNormal, "Killing", "Stopping container app")
	if err := k.EventsWritten(short, time.Second); err == nil || !strings.Contains(err.Error(), "context") {
		t.Errorf("EventsWritten past its context's deadline: %v, want the context's error", err)
	}
}
