package history

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTree writes t as a tree: the rollout, its push, each pod with its
// steps, then how the rollout ended. Times are in loc.
//
//	upgrade u-1a2b3c4d5e6f  Deployment/shop/web → registry.example/shop/web:1.3.0  completed in 7.2s
//	├── 10:02:11.000  image.pushed                 registry.example/shop/web:1.3.0 (distribution)
//	├── shop/web-0  wave 1  node-1  succeeded in 3.4s
//	│   ├── 10:02:11.100  upgrade.planned     +100ms  wave 1 → registry.example/shop/web:1.3.0
//	│   └── 10:02:14.500  upgrade.succeeded   +1.2s   succeeded
//	└── 10:02:18.200  rollout.completed   +200ms  completed 2/2 succeeded, template synced
func WriteTree(w io.Writer, t Trace, loc *time.Location) error {
	var b strings.Builder
	b.WriteString(Abbrev(treeHeader(t)) + "\n")
	var items []func(last bool)
	if t.Push != nil {
		items = append(items, func(last bool) { b.WriteString(branch(last) + stepText(*t.Push, loc) + "\n") })
	}
	for _, p := range t.Pods {
		items = append(items, func(last bool) { writePod(&b, p, last, loc) })
	}
	for _, s := range t.Rollout {
		items = append(items, func(last bool) { b.WriteString(branch(last) + stepText(s, loc) + "\n") })
	}
	for i, f := range items {
		f(i == len(items)-1)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

func treeHeader(t Trace) string {
	s := "upgrade " + t.UpgradeID
	if t.Workload != "" {
		s += "  " + t.Workload
	}
	if t.Target != "" {
		s += " → " + t.Target
	}
	state := t.State
	if state == "" {
		state = "in flight"
	}
	return s + fmt.Sprintf("  %s after %s", state, Elapsed(t.End.Sub(t.Start)))
}

func writePod(b *strings.Builder, p PodPath, last bool, loc *time.Location) {
	b.WriteString(branch(last) + podHeader(p) + "\n")
	indent := "│   "
	if last {
		indent = "    "
	}
	for i, s := range p.Steps {
		b.WriteString(indent + branch(i == len(p.Steps)-1) + stepText(s, loc) + "\n")
	}
}

func podHeader(p PodPath) string {
	s := fmt.Sprintf("%s  wave %d", p.Pod, p.Wave)
	if p.Node != "" {
		s += "  " + p.Node
	}
	if p.Outcome == "" {
		return s + "  in flight"
	}
	s += "  " + p.Outcome
	if p.Reason != "" {
		s += " " + p.Reason
	}
	return s + " in " + Elapsed(p.Took)
}

func branch(last bool) string {
	if last {
		return "└── "
	}
	return "├── "
}

func stepText(s Step, loc *time.Location) string {
	return fmt.Sprintf("%s  %-19s %-7s %s", s.Time.In(loc).Format(ClockFormat), s.Type, "+"+Elapsed(s.After), Abbrev(s.Detail))
}

// WriteTable writes every step of t as one row, in stream order, with the
// pod it belongs to ("-" for rollout-level steps).
func WriteTable(w io.Writer, t Trace, loc *time.Location) error {
	type row struct {
		pod string
		s   Step
	}
	var rows []row
	if t.Push != nil {
		rows = append(rows, row{"-", *t.Push})
	}
	for _, p := range t.Pods {
		for _, s := range p.Steps {
			rows = append(rows, row{p.Pod, s})
		}
	}
	for _, s := range t.Rollout {
		rows = append(rows, row{"-", s})
	}
	sort.SliceStable(rows, func(i, j int) bool { return stepBefore(rows[i].s, rows[j].s) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tAFTER\tPOD\tTYPE\tDETAIL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t+%s\t%s\t%s\t%s\n", r.s.Time.In(loc).Format(ClockFormat), Elapsed(r.s.After), r.pod, r.s.Type, Abbrev(r.s.Detail))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// Elapsed rounds d for people: 812ms, 3.4s, 2m5s.
func Elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// stepBefore orders steps by stream sequence, or by time where one has none.
func stepBefore(a, b Step) bool {
	if a.Seq != 0 && b.Seq != 0 {
		return a.Seq < b.Seq
	}
	return a.Time.Before(b.Time)
}
