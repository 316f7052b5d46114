package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// replicaShare is one replica's part of a scale run, from its /metrics
// (what changed over the run): the inputs each function took, how many
// it answered "not yet" or failed (each one a redelivery), and the CPU
// time the process used.
type replicaShare struct {
	Replica  int                `json:"replica"`
	Received map[string]float64 `json:"received"`
	Later    map[string]float64 `json:"later,omitempty"`
	Retried  map[string]float64 `json:"retried,omitempty"`
	// Delivered are the inputs by event type (every function's),
	// Published the outputs by type (the functions' and the pod
	// watcher's), Duplicates the outputs the stream dropped as an event it
	// had.
	Delivered  map[string]float64 `json:"delivered,omitempty"`
	Published  map[string]float64 `json:"published,omitempty"`
	Duplicates map[string]float64 `json:"duplicates,omitempty"`
	CPUSeconds float64            `json:"cpuSeconds"`
	// Conflicts are the rollout record's writes that lost the
	// compare-and-swap to another replica and were made again.
	Conflicts float64 `json:"recordConflicts"`
	// Writes are the rollout record's writes.
	Writes float64 `json:"recordWrites"`
	Error  string  `json:"error,omitempty"`
}

// shareMetrics reads every replica's metrics.
func (p *project) shareMetrics(ctx context.Context) []replicaShare {
	out := make([]replicaShare, len(p.addrs))
	for i, addr := range p.addrs {
		out[i] = scrapeShare(ctx, i, "http://"+addr+"/metrics")
	}
	return out
}

// sharesSince is each replica's share between two readings.
func sharesSince(before, after []replicaShare) []replicaShare {
	out := make([]replicaShare, 0, len(after))
	for i, a := range after {
		if i >= len(before) || a.Error != "" || before[i].Error != "" {
			a.Error = joinErr(a.Error, errNoReading)
			out = append(out, a)
			continue
		}
		b := before[i]
		out = append(out, replicaShare{Replica: i, Received: minus(a.Received, b.Received), Later: minus(a.Later, b.Later),
			Retried: minus(a.Retried, b.Retried), Delivered: minus(a.Delivered, b.Delivered), Published: minus(a.Published, b.Published),
			Duplicates: minus(a.Duplicates, b.Duplicates), CPUSeconds: a.CPUSeconds - b.CPUSeconds, Conflicts: a.Conflicts - b.Conflicts,
			Writes: a.Writes - b.Writes})
	}
	return out
}

var errNoReading = errors.New("no reading before the run")

func minus(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range a {
		if d := v - b[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func scrapeShare(ctx context.Context, i int, url string) replicaShare {
	s := newShare(i)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer resp.Body.Close()
	if err := s.parse(resp.Body); err != nil {
		s.Error = fmt.Sprintf("%s: %v", url, err)
	}
	return s
}

func newShare(i int) replicaShare {
	return replicaShare{Replica: i, Received: map[string]float64{}, Later: map[string]float64{}, Retried: map[string]float64{},
		Delivered: map[string]float64{}, Published: map[string]float64{}, Duplicates: map[string]float64{}}
}

var sampleLine = regexp.MustCompile(`^([a-z_]+)(?:\{([^}]*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`(\w+)="([^"]*)"`)

// parse adds the samples of the Prometheus text format that make a share.
func (s *replicaShare) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m := sampleLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, kv := range labelPair.FindAllStringSubmatch(m[2], -1) {
			labels[kv[1]] = kv[2]
		}
		switch m[1] {
		case "inplace_events_received_total":
			s.Received[labels["function"]] += v
			s.Delivered[labels["type"]] += v
		case "inplace_events_published_total", "inplace_pod_watcher_published_total":
			s.Published[labels["type"]] += v
		case "inplace_events_duplicate_total", "inplace_pod_watcher_duplicate_total":
			s.Duplicates[labels["type"]] += v
		case "inplace_events_settled_total":
			switch labels["outcome"] {
			case "later":
				s.Later[labels["function"]] += v
			case "retry":
				s.Retried[labels["function"]] += v
			}
		case "inplace_record_conflicts_total":
			s.Conflicts += v
		case "inplace_record_writes_total":
			s.Writes += v
		case "process_cpu_seconds_total":
			s.CPUSeconds += v
		}
	}
	return sc.Err()
}

// String is one line of the report: the replica's inputs by function
// ("later" and "retry" count redeliveries) and its CPU time.
func (s replicaShare) String() string {
	if s.Error != "" {
		return fmt.Sprintf("#%d: %s", s.Replica, s.Error)
	}
	var parts []string
	for _, fn := range slices.Sorted(maps.Keys(s.Received)) {
		p := fmt.Sprintf("%s %.0f", fn, s.Received[fn])
		if l, r := s.Later[fn], s.Retried[fn]; l+r > 0 {
			p += fmt.Sprintf(" (not yet %.0f, failed %.0f)", l, r)
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("#%d: CPU %.1f s; record writes %.0f, that lost the compare-and-swap %.0f; inputs: %s",
		s.Replica, s.CPUSeconds, s.Writes, s.Conflicts, strings.Join(parts, ", "))
}

// messagesPerPod is the bus traffic of a run per upgraded pod, every
// replica's together, by event type: the deliveries to functions (each
// redelivery one more) and the publishes, with those the stream dropped as
// duplicates of an event it had.
func messagesPerPod(shares []replicaShare, pods int) string {
	in, out, dup := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, s := range shares {
		for k, v := range s.Delivered {
			in[k] += v
		}
		for k, v := range s.Published {
			out[k] += v
		}
		for k, v := range s.Duplicates {
			dup[k] += v
		}
	}
	types := map[string]bool{}
	for _, m := range []map[string]float64{in, out} {
		for k := range m {
			types[k] = true
		}
	}
	n := float64(max(pods, 1))
	var parts []string
	var allIn, allOut float64
	for _, t := range slices.Sorted(maps.Keys(types)) {
		p := fmt.Sprintf("%s in %.2f, out %.2f", t, in[t]/n, out[t]/n)
		if dup[t] > 0 {
			p += fmt.Sprintf(" (%.2f duplicates)", dup[t]/n)
		}
		parts = append(parts, p)
		allIn, allOut = allIn+in[t], allOut+out[t]
	}
	return fmt.Sprintf("%.1f in, %.1f out: %s", allIn/n, allOut/n, strings.Join(parts, "; "))
}
