package fidelity_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// recorder keeps the observable story of one pod: each distinct status
// shape it went through, and the Events about it.
type recorder struct {
	mu     sync.Mutex
	names  map[string]string // digest or image reference -> a short label
	shapes []string
	events []string
	last   *corev1.Pod
	stop   func()
}

func record(t *testing.T, c kubernetes.Interface, ns, pod string, names map[string]string) *recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pw, err := c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", pod).String()})
	if err != nil {
		t.Fatal(err)
	}
	ew, err := c.CoreV1().Events(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod).String()})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{names: names}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ev := range pw.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type != watch.Deleted {
				r.pod(p)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev := range ew.ResultChan() {
			if e, ok := ev.Object.(*corev1.Event); ok && ev.Type == watch.Added {
				r.event(e)
			}
		}
	}()
	r.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(r.stop)
	return r
}

func (r *recorder) pod(p *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = p
	s := r.shape(p)
	if n := len(r.shapes); n == 0 || r.shapes[n-1] != s {
		r.shapes = append(r.shapes, s)
	}
}

func (r *recorder) event(e *corev1.Event) {
	// Only the kubelet's Events are compared: the simulation stands in for
	// the kubelet alone, and the control plane's own (the taint-eviction
	// controller cancelling a deletion when a loaded hollow node's not-ready
	// taint comes and goes) say nothing about it.
	if e.Source.Component != "kubelet" && e.ReportingController != "kubelet" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := fmt.Sprintf("%s %s %s: %s", e.Source.Component, e.Type, e.Reason, r.label(normalizeMessage(e.Message)))
	if !slices.Contains(r.events, s) {
		r.events = append(r.events, s)
	}
}

// current is the last pod seen.
func (r *recorder) current() *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// story stops the recorder and returns what it saw.
func (r *recorder) story() (shapes, events []string) {
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.shapes), slices.Clone(r.events)
}

// shape is what a client can observe of a pod's status, without times,
// IDs, addresses or the order of conditions.
func (r *recorder) shape(p *corev1.Pod) string {
	var conds []string
	for _, c := range p.Status.Conditions {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		conds = append(conds, s)
	}
	sort.Strings(conds)
	var ctrs []string
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			ctrs = append(ctrs, fmt.Sprintf("%s{%s ready=%v started=%v restarts=%d image=%s id=%s last=%s resources=%v allocated=%v}", cs.Name,
				state(cs.State), cs.Ready, cs.Started != nil && *cs.Started, cs.RestartCount, r.label(cs.Image),
				r.label(imageref.DigestOf(cs.ImageID)), state(cs.LastTerminationState), cs.Resources != nil, len(cs.AllocatedResources) > 0))
		}
	}
	return fmt.Sprintf("%s [%s] %s", p.Status.Phase, strings.Join(conds, " "), strings.Join(ctrs, " "))
}

func state(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return "waiting:" + s.Waiting.Reason
	case s.Terminated != nil:
		return fmt.Sprintf("terminated:%s/%d", s.Terminated.Reason, s.Terminated.ExitCode)
	}
	return "-"
}

// label replaces every known digest and image reference in s by its label.
func (r *recorder) label(s string) string {
	keys := make([]string, 0, len(r.names))
	for k := range r.names {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, r.names[k])
	}
	return s
}

var (
	durations = regexp.MustCompile(`\b[0-9.]+(ns|µs|ms|s|m)([0-9.]+(ns|µs|ms|s))*\b`)
	uids      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	podNames  = regexp.MustCompile(`pod=[^ ]+|in pod [^ ]+`)
)

// normalizeMessage drops what differs between two runs of one story:
// durations, UIDs, pod names.
func normalizeMessage(m string) string {
	m = uids.ReplaceAllString(m, "<uid>")
	m = podNames.ReplaceAllString(m, "<pod>")
	return durations.ReplaceAllString(m, "<d>")
}
