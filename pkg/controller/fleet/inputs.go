package fleet

import (
	"context"
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Begin records a push under the controller's policy (once: a push begun
// again keeps its record) and wakes it. A push that can never be begun
// (not an image.pushed, its id not a bucket key, its data invalid) is a
// settle.Permanent error; a failure to record it is retryable.
func (c *Controller) Begin(ctx context.Context, push cloudevents.Event) error {
	if push.Type() != events.ImagePushed {
		return settle.Permanentf("fleet begin: type %q is not %s", push.Type(), events.ImagePushed)
	}
	if !key.MatchString(push.ID()) {
		return settle.Permanentf("fleet begin: push id %q is not a bucket key", push.ID())
	}
	d, err := events.As[events.ImagePushedData](push)
	if err != nil {
		return settle.Permanentf("fleet begin: %w", err)
	}
	body, err := push.MarshalJSON()
	if err != nil {
		return fmt.Errorf("fleet begin: %w", err)
	}
	err = c.o.Store.update(ctx, push.ID(), func(r *core.Record) (*core.Record, error) {
		if r != nil {
			return nil, bus.ErrNoChange
		}
		return core.NewRecord(push.ID(), d.Ref(), body, c.o.Policy, c.o.Now()), nil
	})
	if err != nil {
		return fmt.Errorf("fleet begin %s: %w", push.ID(), err)
	}
	c.q.Add(push.ID())
	return nil
}

// Report takes a member's rollout.completed or rollout.halted event that
// arrived on cluster's subject: it finds the push the rollout belongs to
// (its upgrade id derives from the push id) and applies it to that record.
// A report that belongs to no push or is refused changes nothing; the
// error says why.
func (c *Controller) Report(ctx context.Context, cluster string, e cloudevents.Event) error {
	d, err := events.As[events.RolloutData](e)
	if err != nil {
		return fmt.Errorf("fleet report from %s: %w: %w", cluster, core.ErrRefused, err)
	}
	rep := core.Report{Cluster: cluster, Event: e.ID(), Type: e.Type(), At: e.Time(), Rollout: d}
	keys, err := c.o.Store.kv.Keys(ctx)
	if err != nil {
		return fmt.Errorf("fleet report from %s: %w", cluster, err)
	}
	w := d.Workload
	w.UID = ""
	for _, push := range keys {
		if events.DeriveUpgradeID(push, w) != d.UpgradeID {
			continue
		}
		if err := c.apply(ctx, push, rep); err != nil {
			return fmt.Errorf("fleet report %s from %s: %w", e.ID(), cluster, err)
		}
		return nil
	}
	return fmt.Errorf("fleet report %s from %s: %w", e.ID(), cluster, core.ErrNotThisPush)
}

func (c *Controller) apply(ctx context.Context, push string, rep core.Report) error {
	var refused error
	changed := false
	err := c.o.Store.update(ctx, push, func(r *core.Record) (*core.Record, error) {
		changed, refused = false, nil
		if r == nil {
			refused = core.ErrNotThisPush
			return nil, bus.ErrNoChange
		}
		ok, err := core.Apply(r, rep, c.o.Now())
		if err != nil || !ok {
			refused = err
			return nil, bus.ErrNoChange
		}
		changed = true
		return r, nil
	})
	if err != nil {
		return err
	}
	if changed {
		c.q.Add(push)
	}
	return refused
}

// Approve lets a stage of a push start (when its policy asks for an
// approval).
func (c *Controller) Approve(ctx context.Context, push, stage, by string) error {
	return c.gate(ctx, push, stage, func(r *core.Record) *map[string]core.Gate { return &r.Approved },
		core.Gate{Verdict: core.Pass, By: by, At: c.o.Now()})
}

// Analysed records a stage's analysis verdict (core.Pass or core.Fail).
func (c *Controller) Analysed(ctx context.Context, push, stage, verdict, by string) error {
	if verdict != core.Pass && verdict != core.Fail {
		return fmt.Errorf("fleet analysis %s/%s: verdict %q is not %s or %s", push, stage, verdict, core.Pass, core.Fail)
	}
	return c.gate(ctx, push, stage, func(r *core.Record) *map[string]core.Gate { return &r.Analysis },
		core.Gate{Verdict: verdict, By: by, At: c.o.Now()})
}

// gate sets a stage's gate once; a stage given a verdict keeps it.
func (c *Controller) gate(ctx context.Context, push, stage string, field func(*core.Record) *map[string]core.Gate, g core.Gate) error {
	var missing error
	err := c.o.Store.update(ctx, push, func(r *core.Record) (*core.Record, error) {
		missing = nil
		switch {
		case r == nil:
			missing = fmt.Errorf("push %q: no fleet record", push)
			return nil, bus.ErrNoChange
		case stageOf(r.Policy, stage).Name == "":
			missing = fmt.Errorf("stage %q: %w in the push's policy", stage, errNoStage)
			return nil, bus.ErrNoChange
		}
		m := field(r)
		if _, ok := (*m)[stage]; ok {
			return nil, bus.ErrNoChange
		}
		if *m == nil {
			*m = map[string]core.Gate{}
		}
		(*m)[stage] = g
		return r, nil
	})
	if err == nil {
		err = missing
	}
	if err != nil {
		return fmt.Errorf("fleet gate %s/%s: %w", push, stage, err)
	}
	c.q.Add(push)
	return nil
}
