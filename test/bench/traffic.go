package main

import (
	"context"
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/test/traffic"
)

// trafficCounts are what the traffic probe counted during one rollout.
type trafficCounts struct {
	Sent     int64            `json:"sent"`
	OK       int64            `json:"ok"`
	Failed   int64            `json:"failed"`
	Refused  int64            `json:"refused"`
	Reset    int64            `json:"reset"`
	Timeout  int64            `json:"timeout"`
	Errors5x int64            `json:"serverError"`
	Versions map[string]int64 `json:"versions"`
}

// trafficTail is how long the window stays open after the rollout ends,
// for the old pods' last moments.
const trafficTail = 2 * time.Second

// trafficProbe is a running probe and its counts when the window opened.
type trafficProbe struct {
	p      *traffic.Probe
	before traffic.Counts
}

// startTraffic runs the traffic probe against the run's Service through
// its DNS name and opens a window once requests are answered steadily.
func (p *part) startTraffic(ctx context.Context, r *prepared) (*trafficProbe, error) {
	url := fmt.Sprintf("http://%s.%s.svc.cluster.local/", r.wl.Name, r.ns)
	pr, err := traffic.Start(ctx, p.client, r.ns, url, traffic.Options{Registry: p.w.Registry})
	if err != nil {
		return nil, err
	}
	c, err := pr.Steady(ctx, time.Minute)
	if err != nil {
		_, _ = pr.Stop(ctx)
		return nil, err
	}
	return &trafficProbe{p: pr, before: c}, nil
}

// stop closes the window trafficTail after now and stops the probe.
func (t *trafficProbe) stop(ctx context.Context) (*trafficCounts, error) {
	end := time.Now().Add(trafficTail)
	if _, err := t.p.Wait(ctx, time.Minute, "the window's end", func(c traffic.Counts) bool { return c.At.After(end) }); err != nil {
		return nil, err
	}
	final, err := t.p.Stop(ctx)
	if err != nil {
		return nil, err
	}
	w := final.Sub(t.before)
	return &trafficCounts{Sent: w.Sent, OK: w.OK, Failed: w.Failed, Refused: w.Refused, Reset: w.Reset,
		Timeout: w.Timeout, Errors5x: w.ServerError, Versions: w.Versions}, nil
}

// String is the counts as a table cell: failed of sent, and why.
func (t *trafficCounts) String() string {
	if t == nil {
		return "-"
	}
	s := fmt.Sprintf("%d of %d", t.Failed, t.Sent)
	if t.Failed > 0 {
		s += fmt.Sprintf(" (%d refused, %d reset, %d timeout, %d 5xx)", t.Refused, t.Reset, t.Timeout, t.Errors5x)
	}
	return s
}
