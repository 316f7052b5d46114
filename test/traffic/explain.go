package traffic

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/test/traffic/probe"
)

// Recorder keeps what happened to the pods behind a Service while a probe
// runs, each change stamped when this process saw it: the pods' Ready
// condition, readiness gates and containers, and each EndpointSlice's
// endpoints. Explain lays it beside the probe's failures, the pods' own
// logs and the nodes' logs, so a failed request says which pod it met and
// who was late.
type Recorder struct {
	client kubernetes.Interface
	ns     string
	sel    string

	mu    sync.Mutex
	lines []line
	last  map[string]string // by object: its last summary
}

// line is one timed line of an explanation.
type line struct {
	at   time.Time
	text string
}

// Record watches the pods of namespace matching selector (a label
// selector) and the namespace's EndpointSlices until ctx ends.
func Record(ctx context.Context, client kubernetes.Interface, namespace, selector string) (*Recorder, error) {
	match, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", namespace, err)
	}
	r := &Recorder{client: client, ns: namespace, sel: selector, last: map[string]string{}}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(namespace))
	pods := r.recordInto(f.Core().V1().Pods().Informer(), func(o any) (string, string, bool) {
		p, ok := o.(*corev1.Pod)
		if !ok || !match.Matches(labels.Set(p.Labels)) {
			return "", "", false
		}
		return "pod " + p.Name, podSummary(p), true
	})
	eps := r.recordInto(f.Discovery().V1().EndpointSlices().Informer(), func(o any) (string, string, bool) {
		s, ok := o.(*discoveryv1.EndpointSlice)
		if !ok {
			return "", "", false
		}
		return "endpointslice " + s.Name, sliceSummary(s), true
	})
	if err := errors.Join(pods, eps); err != nil {
		return nil, fmt.Errorf("record %s: %w", namespace, err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return r, nil
}

// recordInto notes each object inf adds, updates or deletes, by the key
// and summary describe gives it (ok false: not recorded).
func (r *Recorder) recordInto(inf cache.SharedIndexInformer, describe func(any) (key, summary string, ok bool)) error {
	note := func(o any) {
		if key, summary, ok := describe(o); ok {
			r.note(key, summary)
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, o any) { note(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if key, _, ok := describe(o); ok {
				r.note(key, "deleted")
			}
		}})
	return err
}

func (r *Recorder) note(key, summary string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, seen := r.last[key]; seen && last == summary {
		return
	}
	r.last[key] = summary
	r.lines = append(r.lines, line{at: time.Now(), text: key + ": " + summary})
}

// podSummary is what of a pod decides whether it serves: its Ready
// condition and readiness gates, and each container's state and ready.
func podSummary(p *corev1.Pod) string {
	var b strings.Builder
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady && !strings.Contains(string(c.Type), "/") {
			continue // a readiness gate's type has a domain
		}
		fmt.Fprintf(&b, "%s=%s ", c.Type, c.Status)
	}
	for _, cs := range p.Status.ContainerStatuses {
		state := "waiting"
		switch {
		case cs.State.Running != nil:
			state = "running"
		case cs.State.Terminated != nil:
			state = "terminated"
		}
		fmt.Fprintf(&b, "%s[%s ready=%t restarts=%d] ", cs.Name, state, cs.Ready, cs.RestartCount)
	}
	return strings.TrimSpace(b.String())
}

// sliceSummary names each endpoint's pod and its conditions.
func sliceSummary(s *discoveryv1.EndpointSlice) string {
	var parts []string
	for _, e := range s.Endpoints {
		name := strings.Join(e.Addresses, ",")
		if e.TargetRef != nil {
			name = e.TargetRef.Name
		}
		parts = append(parts, fmt.Sprintf("%s(ready=%s serving=%s terminating=%s)", name,
			cond(e.Conditions.Ready), cond(e.Conditions.Serving), cond(e.Conditions.Terminating)))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func cond(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

// Explain lays out, in time order, what was recorded from before to
// after around the failures, with each pod's container logs (the current
// and the previous container's, as `kubectl logs --timestamps` gives
// them) and the klog lines of the given log files (a node's kube-proxy,
// kubelet) in that window.
func (r *Recorder) Explain(ctx context.Context, failures []Sample, before, after time.Duration, logFiles ...string) string {
	if len(failures) == 0 {
		return ""
	}
	from, to := failures[0].At.Add(-before), failures[len(failures)-1].At.Add(after)
	in := func(t time.Time) bool { return !t.Before(from) && !t.After(to) }
	var out []line
	for _, f := range failures {
		out = append(out, line{at: f.At, text: "probe: FAILED " + f.Error})
	}
	r.mu.Lock()
	for _, l := range r.lines {
		if in(l.at) {
			out = append(out, l)
		}
	}
	r.mu.Unlock()
	out = append(out, r.podLogs(ctx, in)...)
	for _, f := range logFiles {
		out = append(out, klogLines(f, from, in)...)
	}
	slices.SortStableFunc(out, func(a, b line) int { return a.at.Compare(b.at) })
	var b strings.Builder
	fmt.Fprintf(&b, "\nwhat happened from %s to %s:\n", from.Format("15:04:05.000"), to.Format("15:04:05.000"))
	for _, l := range out {
		fmt.Fprintf(&b, "  %s %s\n", l.at.UTC().Format("15:04:05.000"), l.text)
	}
	return b.String()
}

// Sample is one failed request of a probe.
type Sample = probe.Sample

// podLogs are the timestamped log lines of the recorded pods' containers.
func (r *Recorder) podLogs(ctx context.Context, in func(time.Time) bool) []line {
	pods, err := r.client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	if err != nil {
		return []line{{at: time.Now(), text: "pod logs: " + err.Error()}}
	}
	var out []line
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			for _, prev := range []bool{true, false} {
				raw, err := r.client.CoreV1().Pods(r.ns).GetLogs(p.Name, &corev1.PodLogOptions{
					Container: c.Name, Previous: prev, Timestamps: true}).DoRaw(ctx)
				if err != nil {
					continue // no previous container
				}
				for _, l := range strings.Split(string(raw), "\n") {
					ts, rest, ok := strings.Cut(l, " ")
					at, err := time.Parse(time.RFC3339Nano, ts)
					if ok && err == nil && in(at) {
						out = append(out, line{at: at, text: fmt.Sprintf("log %s/%s: %s", p.Name, c.Name, rest)})
					}
				}
			}
		}
	}
	return out
}

// klogHeader is a klog line's header: level, month and day, time.
var klogHeader = regexp.MustCompile(`^[IWEF](\d{2})(\d{2}) (\d{2}:\d{2}:\d{2}\.\d{6})`)

// klogLines are the lines of a klog file in the window; klog writes no
// year and no zone (UTC here), so the year is from's.
func klogLines(path string, from time.Time, in func(time.Time) bool) []line {
	f, err := os.Open(path)
	if err != nil {
		return []line{{at: from, text: "log " + path + ": " + err.Error()}}
	}
	defer func() { _ = f.Close() }()
	name := path
	if i := strings.LastIndex(path, "/"); i >= 0 {
		name = path[i+1:]
	}
	var out []line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := klogHeader.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.Parse("2006-01-02 15:04:05.000000", fmt.Sprintf("%d-%s-%s %s", from.UTC().Year(), m[1], m[2], m[3]))
		if err == nil && in(at) {
			out = append(out, line{at: at, text: name + ": " + sc.Text()})
		}
	}
	return out
}
