package runner

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// process handles one message and settles it exactly once.
func (r *Runner) process(ctx context.Context, f Function, msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		r.opts.Log.Error("message without metadata", "function", f.Name(), "err", err)
		_ = msg.Nak()
		return
	}
	cfg := r.bus.Config()
	hctx, cancel := context.WithTimeout(ctx, handlerDeadline(cfg.AckWait))
	defer cancel()

	start := time.Now()
	e, outs, err := r.invoke(hctx, f, msg)
	if r.opts.Metrics != nil {
		r.opts.Metrics.Duration.WithLabelValues(f.Name()).Observe(time.Since(start).Seconds())
	}
	kind, delay := settle.Classify(err)
	if kind == settle.Done {
		if perr := r.publish(hctx, f, outs); perr != nil {
			kind, err = settle.Retry, perr
		} else if c, ok := f.(Confirmed); ok && len(outs) > 0 {
			c.Published(e, outs)
		}
	}
	r.settle(hctx, f, msg, md, e, kind, delay, err)
}

// handlerDeadline leaves a margin below AckWait for publishing and settling.
func handlerDeadline(ackWait time.Duration) time.Duration {
	margin := max(ackWait/5, time.Second)
	return max(ackWait-margin, ackWait/2)
}

// invoke decodes the message and calls the handler, turning a panic into a
// retryable error so one bad handler cannot take the process down.
func (r *Runner) invoke(ctx context.Context, f Function, msg jetstream.Msg) (e cloudevents.Event, outs []cloudevents.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panic: %v\n%s", p, debug.Stack())
		}
	}()
	e, err = bus.Decode(ctx, msg.Subject(), msg.Headers(), msg.Data())
	if err != nil {
		return e, nil, err
	}
	e, data, err := events.NormalizeChecked(e)
	if err != nil {
		return e, nil, err
	}
	ctx = events.WithChecked(ctx, e, data)
	if r.opts.Metrics != nil {
		r.opts.Metrics.Received.WithLabelValues(f.Name(), events.Short(e.Type())).Inc()
	}
	outs, err = f.Handle(ctx, e)
	return e, outs, err
}

// publish puts every output on the bus before the input is acked.
func (r *Runner) publish(ctx context.Context, f Function, outs []cloudevents.Event) error {
	for _, out := range outs {
		dup, err := r.bus.PublishAck(ctx, out)
		if err != nil {
			return err
		}
		if m := r.opts.Metrics; m != nil {
			m.Published.WithLabelValues(f.Name(), events.Short(out.Type())).Inc()
			if dup {
				m.Duplicates.WithLabelValues(f.Name(), events.Short(out.Type())).Inc()
			}
		}
	}
	return nil
}

func (r *Runner) settle(ctx context.Context, f Function, msg jetstream.Msg, md *jetstream.MsgMetadata,
	e cloudevents.Event, kind settle.Kind, delay time.Duration, err error) {
	cfg := r.bus.Config()
	n := md.NumDelivered
	kind, err = r.budget.verdict(ctx, f.Name(), md.Sequence.Stream, n, kind, err)
	if (kind == settle.Done || kind == settle.Fail) && n > 1 {
		r.budget.forget(f.Name(), md.Sequence.Stream)
	}
	log := r.opts.Log.With("function", f.Name(), "event", e.ID(), "type", e.Type(), "delivery", n)
	var serr error
	switch kind {
	case settle.Done:
		if r.opts.beforeAck != nil && !r.opts.beforeAck(f.Name()) {
			return // simulated crash: no settlement, the server redelivers
		}
		serr = msg.Ack()
	case settle.Retry:
		log.Warn("handler failed, will retry", "err", err, "in", cfg.BackoffFor(n))
		serr = msg.NakWithDelay(cfg.BackoffFor(n))
	case settle.Later:
		log.Debug("not yet", "reason", err, "in", delay)
		serr = msg.NakWithDelay(delay)
	case settle.Fail:
		log.Error("dead-lettered", "err", err)
		if derr := r.bus.DeadLetter(ctx, f.Name(), msg, err.Error()); derr != nil {
			log.Error("dead-letter failed, will retry", "err", derr)
			kind, serr = settle.Retry, msg.NakWithDelay(cfg.BackoffFor(n))
			break
		}
		serr = msg.TermWithReason(truncate(err.Error(), 256))
	}
	if serr != nil {
		log.Warn("settle failed; the server will redeliver", "outcome", kind, "err", serr)
	}
	if r.opts.Metrics != nil {
		r.opts.Metrics.Settled.WithLabelValues(f.Name(), kind.String()).Inc()
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
