package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"k8s.io/client-go/util/workqueue"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
)

// Releaser publishes a push to one member cluster; msgID is the same for
// the same push and cluster, so a second publish is a duplicate.
type Releaser interface {
	Release(ctx context.Context, cluster, msgID string, push cloudevents.Event) error
}

// Options configure a Controller.
type Options struct {
	Store   *Store
	Policy  core.Policy
	Release Releaser
	Log     *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Controller promotes pushes through the fleet.
type Controller struct {
	o Options
	q workqueue.TypedRateLimitingInterface[string]
}

// New makes a controller; Run works it.
func New(o Options) (*Controller, error) {
	if err := o.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("fleet controller: policy: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Controller{o: o, q: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "fleet"})}, nil
}

// Run watches the records (each one wakes its push on start and after
// every write) and works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		c.q.ShutDown()
	}()
	watch := make(chan error, 1)
	go func() {
		watch <- c.o.Store.kv.Watch(ctx, func(key string, _ []byte) { c.q.Add(key) })
	}()
	for c.next(ctx) {
	}
	if err := <-watch; err != nil && ctx.Err() == nil {
		return fmt.Errorf("fleet controller: %w", err)
	}
	return nil
}

func (c *Controller) next(ctx context.Context) bool {
	push, quit := c.q.Get()
	if quit {
		return false
	}
	defer c.q.Done(push)
	if err := c.sync(ctx, push); err != nil && ctx.Err() == nil {
		c.o.Log.Warn("fleet: sync failed; again after a back-off", "push", push, "err", err)
		c.q.AddRateLimited(push)
		return true
	}
	c.q.Forget(push)
	return true
}

// sync decides one push from its record: records a halt found in the
// members' reports, releases the stages that may start.
func (c *Controller) sync(ctx context.Context, push string) error {
	r, err := c.o.Store.Get(ctx, push)
	if err != nil || r == nil {
		return err
	}
	d := core.Decide(r)
	if d.Halt != nil {
		if r.Halt == nil {
			c.o.Log.Info("fleet: halted", "push", push, "stage", d.Halt.Stage, "cluster", d.Halt.Cluster, "reason", d.Halt.Reason)
			return c.o.Store.update(ctx, push, func(r *core.Record) (*core.Record, error) {
				if r == nil || r.Halt != nil {
					return nil, bus.ErrNoChange
				}
				r.Halt = core.Decide(r).Halt
				return r, nil
			})
		}
		return nil
	}
	for _, stage := range d.Start {
		if err := c.release(ctx, r, stage); err != nil {
			return err
		}
	}
	return nil
}

// release records each cluster of the stage sent, then publishes it the
// push (so a report of a cluster that got the push always finds it sent;
// until the stage is recorded released, every wake publishes again, and
// the message id makes that a duplicate), then records the stage
// released.
func (c *Controller) release(ctx context.Context, r *core.Record, stage string) error {
	var e cloudevents.Event
	if err := e.UnmarshalJSON(r.Event); err != nil {
		return fmt.Errorf("release %s: the recorded push: %w", stage, err)
	}
	sent := func(r *core.Record) *map[string]time.Time { return &r.Sent }
	for _, cl := range stageOf(r.Policy, stage).Clusters {
		if err := c.note(ctx, r.Push, stage, sent, cl); err != nil {
			return err
		}
		if err := c.o.Release.Release(ctx, cl, MsgID(r.Push, cl), e); err != nil {
			return fmt.Errorf("release %s to %s: %w", stage, cl, err)
		}
	}
	c.o.Log.Info("fleet: released", "push", r.Push, "stage", stage)
	return c.note(ctx, r.Push, stage, func(r *core.Record) *map[string]time.Time { return &r.Released }, stage)
}

// note records name with the time in the map field picks of the stored
// record (a cluster sent, a stage released), while stage may start.
func (c *Controller) note(ctx context.Context, push, stage string, field func(*core.Record) *map[string]time.Time, name string) error {
	now := c.o.Now()
	return c.o.Store.update(ctx, push, func(r *core.Record) (*core.Record, error) {
		if r == nil || !startable(r, stage) {
			return nil, bus.ErrNoChange
		}
		m := field(r)
		if _, ok := (*m)[name]; ok {
			return nil, bus.ErrNoChange
		}
		if *m == nil {
			*m = map[string]time.Time{}
		}
		(*m)[name] = now
		return r, nil
	})
}

func startable(r *core.Record, stage string) bool {
	for _, s := range core.Decide(r).Start {
		if s == stage {
			return true
		}
	}
	return false
}

func stageOf(p core.Policy, name string) core.Stage {
	for _, s := range p.Stages {
		if s.Name == name {
			return s
		}
	}
	return core.Stage{}
}

// MsgID is the Nats-Msg-Id of a push released to a cluster.
func MsgID(push, cluster string) string {
	return "fleet-" + events.DeriveID(push, "fleet.release", cluster)
}

// errNoStage: a gate for a stage the push's policy does not name.
var errNoStage = errors.New("no such stage")
