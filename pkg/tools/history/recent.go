package history

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Upgrade is one rollout as the stream tells it, for `inplace trace`
// without an argument: the upgrades an operator can trace.
type Upgrade struct {
	UpgradeID string    `json:"upgradeID"`
	Workload  string    `json:"workload"`
	Target    string    `json:"target"`
	StartedAt time.Time `json:"startedAt"`
	// Result is completed, halted or in flight (no end seen yet).
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// Result of an Upgrade without an end on the stream.
const InFlightResult = "in flight"

// RecentTypes are the event types Recent reads: each rollout's plans and end.
var RecentTypes = []string{events.Short(events.UpgradePlanned), events.Short(events.RolloutCompleted), events.Short(events.RolloutHalted)}

// Recent groups plan and end records by upgrade id, newest first, at most
// limit of them (all when limit ≤ 0).
func Recent(recs []Record, limit int) []Upgrade {
	byID := map[string]*Upgrade{}
	for _, r := range recs {
		id := events.UpgradeID(r.Event)
		if r.Err != nil || r.Dead != nil || id == "" {
			continue
		}
		u := byID[id]
		if u == nil {
			u = &Upgrade{UpgradeID: id, StartedAt: r.Time(), Result: InFlightResult}
			byID[id] = u
		}
		switch r.Event.Type() {
		case events.UpgradePlanned:
			if p, err := events.As[events.Plan](r.Event); err == nil && u.Workload == "" {
				u.Workload, u.Target = p.Owner.String(), p.Target
			}
		case events.RolloutCompleted, events.RolloutHalted:
			if d, err := events.As[events.RolloutData](r.Event); err == nil {
				u.Workload, u.Target, u.Reason = d.Workload.String(), d.Target, d.Reason
			}
			u.Result = "completed"
			if r.Event.Type() == events.RolloutHalted {
				u.Result = "halted"
			}
		}
		if t := r.Time(); t.Before(u.StartedAt) {
			u.StartedAt = t
		}
	}
	out := make([]Upgrade, 0, len(byID))
	for _, u := range byID {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].UpgradeID < out[j].UpgradeID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// WriteRecent writes the upgrades as a table, ages relative to now.
func WriteRecent(w io.Writer, ups []Upgrade, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPGRADE\tWORKLOAD\tTARGET\tAGE\tRESULT")
	for _, u := range ups {
		result := u.Result
		if u.Reason != "" {
			result += " (" + u.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.UpgradeID, u.Workload, Abbrev(u.Target), Age(now.Sub(u.StartedAt)), result)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write upgrades: %w", err)
	}
	return nil
}
