package history

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// Collector gathers the records of one upgrade from a pass over the
// stream: every record carrying its upgrade id (dead letters included) and
// the image.pushed that started it. A push carries no upgrade id (one push
// may start rollouts of several workloads); it is found by its W3C trace
// id, which the first wave's upgrade.planned events continue.
type Collector struct {
	upgradeID string
	recs      []Record
	// pushes holds every image.pushed seen, by trace id; the push precedes
	// the events that reveal which trace is wanted.
	pushes map[string]Record
}

// NewCollector collects the records of upgradeID.
func NewCollector(upgradeID string) *Collector {
	return &Collector{upgradeID: upgradeID, pushes: map[string]Record{}}
}

// Add considers one record; it has the signature of a Stream.Read callback.
func (c *Collector) Add(r Record) error {
	if r.Err != nil {
		return nil
	}
	if events.UpgradeID(r.Event) == c.upgradeID {
		c.recs = append(c.recs, r)
		return nil
	}
	if r.Dead == nil && r.Event.Type() == events.ImagePushed {
		if tid := traceID(r); tid != "" {
			if _, seen := c.pushes[tid]; !seen {
				c.pushes[tid] = r
			}
		}
	}
	return nil
}

// Records are the upgrade's records in stream order, the push that started
// it first. None when the upgrade id was never seen.
func (c *Collector) Records() []Record {
	if len(c.recs) == 0 {
		return nil
	}
	out := append([]Record(nil), c.recs...)
	added := map[string]bool{}
	for _, r := range c.recs {
		tid := traceID(r)
		if p, ok := c.pushes[tid]; ok && !added[tid] {
			added[tid] = true
			out = append(out, p)
		}
	}
	sortRecords(out)
	return out
}

func traceID(r Record) string {
	return events.TraceID(events.Ext(r.Event, events.ExtTraceParent))
}

// sortRecords orders records by stream sequence, or by time where one of
// the two has none (a record read from a file without it).
func sortRecords(rs []Record) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Seq != 0 && b.Seq != 0 {
			return a.Seq < b.Seq
		}
		return a.Time().Before(b.Time())
	})
}

// Collect reads the records of upgradeID from s, from since on (zero: the
// whole stream), in two passes: the upgrade's own events and dead letters
// (messages naming another upgrade in their headers are not decoded), then
// the image.pushed events stored before the first of them.
func Collect(ctx context.Context, s *Stream, upgradeID string, since time.Time) ([]Record, error) {
	c := NewCollector(upgradeID)
	q := Query{Filter: Filter{UpgradeID: upgradeID, DeadLetters: true}, Since: since}
	if err := s.Read(ctx, q, c.Add); err != nil {
		return nil, fmt.Errorf("collect upgrade %s: %w", upgradeID, err)
	}
	if len(c.recs) == 0 {
		return nil, nil
	}
	q = Query{Filter: Filter{Types: []string{events.Short(events.ImagePushed)}}, Since: since, Until: c.recs[0].Stored}
	if err := s.Read(ctx, q, c.Add); err != nil {
		return nil, fmt.Errorf("collect the push of upgrade %s: %w", upgradeID, err)
	}
	return c.Records(), nil
}
