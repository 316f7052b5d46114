package prometheus

import (
	"context"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/analysis"
)

// Measure takes one measurement of q for target at now: the query over
// the canary pods and, for a baseline query, over the baseline pods. Any
// failure is kept in the measurement's Error, which makes it inconclusive.
func (c *Client) Measure(ctx context.Context, q analysis.Query, args map[string]string, target analysis.Target, now time.Time) analysis.Measurement {
	m := analysis.Measurement{Query: q.Name, At: now}
	var err error
	if m.Value, err = c.run(ctx, q, args, target, now, false); err != nil {
		m.Error = err.Error()
		return m
	}
	if q.Baseline {
		if m.Baseline, err = c.run(ctx, q, args, target, now, true); err != nil {
			m.Error = "baseline: " + err.Error()
		}
	}
	return m
}

func (c *Client) run(ctx context.Context, q analysis.Query, args map[string]string, t analysis.Target, now time.Time, baseline bool) (*float64, error) {
	expr, err := analysis.Render(q, args, t, baseline)
	if err != nil {
		return nil, err
	}
	return c.Query(ctx, expr, now)
}
