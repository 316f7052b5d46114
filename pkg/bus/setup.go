package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bus is a connection to the stream and the KV bucket.
type Bus struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	cfg Config
	log *slog.Logger
	// attached: an identity that may not set up the stream, consumers and
	// buckets (Attach); it only finds them.
	attached bool
}

// ConsumerSpec names a function and the event types it takes.
type ConsumerSpec struct {
	Name  string
	Types []string
	// Pinned: the consumer delivers to one replica at a time (a JetStream
	// priority group with a pinned client, PinGroup); when that replica
	// stops pulling for PinnedTTL, the server pins another.
	Pinned bool
}

// PinGroup is the priority group of a pinned consumer.
const PinGroup = "inplace"

// Connect sets up (or updates) the stream on nc and returns the bus.
func Connect(ctx context.Context, nc *nats.Conn, cfg Config, log *slog.Logger) (*Bus, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	b := &Bus{nc: nc, js: js, cfg: cfg, log: log}
	if err := b.ensureStream(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// Attach returns the bus on nc for an identity that may not set anything
// up (a function's own, see busauth): the stream must exist, and
// EnsureConsumers, KV and Failures only find what the operator made.
func Attach(ctx context.Context, nc *nats.Conn, cfg Config, log *slog.Logger) (*Bus, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	if _, err := js.Stream(ctx, cfg.Stream); err != nil {
		return nil, fmt.Errorf("bus: stream %s (the operator sets it up): %w", cfg.Stream, err)
	}
	return &Bus{nc: nc, js: js, cfg: cfg, log: log, attached: true}, nil
}

// Config returns the bus configuration.
func (b *Bus) Config() Config { return b.cfg }

// JetStream gives operator tools (tail, export, replay) direct stream access.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

func (b *Bus) streamConfig() jetstream.StreamConfig {
	storage := jetstream.FileStorage
	if b.cfg.MemoryStorage {
		storage = jetstream.MemoryStorage
	}
	return jetstream.StreamConfig{
		Name:        b.cfg.Stream,
		Description: "inplace: every CloudEvent of every rollout",
		Subjects:    []string{b.cfg.AllSubjects()},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      b.cfg.MaxAge,
		Storage:     storage,
		Replicas:    max(b.cfg.Replicas, 1),
		Duplicates:  b.cfg.DuplicateWindow(),
		AllowDirect: true,
	}
}

func (b *Bus) ensureStream(ctx context.Context) error {
	want := b.streamConfig()
	var s jetstream.Stream
	err := setUp(ctx, b.log, "stream "+want.Name, func(ctx context.Context) (err error) {
		s, err = b.js.CreateOrUpdateStream(ctx, want)
		return err
	})
	if err != nil {
		return fmt.Errorf("bus: set up stream %s: %w", want.Name, err)
	}
	b.log.Debug("stream ready", "stream", s.CachedInfo().Config.Name, "duplicates", want.Duplicates)
	return nil
}

// ConsumerConfig is the durable pull consumer of a function.
func (b *Bus) ConsumerConfig(spec ConsumerSpec) jetstream.ConsumerConfig {
	subjects := make([]string, 0, len(spec.Types))
	for _, t := range spec.Types {
		subjects = append(subjects, b.cfg.Subject(t))
	}
	c := jetstream.ConsumerConfig{
		Durable:        spec.Name,
		Description:    "inplace function " + spec.Name,
		FilterSubjects: subjects,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        b.cfg.AckWait,
		// Deliveries are bounded by the runner (RetryLimit, LaterLimit), which
		// dead-letters with a reason instead of letting the server drop silently.
		MaxDeliver:    -1,
		MaxAckPending: b.cfg.MaxAckPending,
		// All consumers are created with the stream, before anything is
		// published; a consumer added to an old stream starts at new events
		// rather than replaying a week of history.
		DeliverPolicy: jetstream.DeliverNewPolicy,
	}
	if spec.Pinned {
		c.PriorityPolicy = jetstream.PriorityPolicyPinned
		c.PriorityGroups = []string{PinGroup}
		c.PinnedTTL = max(b.cfg.PinnedTTL, 3*time.Second)
	}
	return c
}

// EnsureConsumers creates or updates the durable consumer of each function
// (an attached bus checks that each exists).
func (b *Bus) EnsureConsumers(ctx context.Context, specs ...ConsumerSpec) error {
	for _, spec := range specs {
		if b.attached {
			if _, err := b.Consumer(ctx, spec.Name); err != nil {
				return err
			}
			continue
		}
		err := setUp(ctx, b.log, "consumer "+spec.Name, func(ctx context.Context) error {
			_, err := b.js.CreateOrUpdateConsumer(ctx, b.cfg.Stream, b.ConsumerConfig(spec))
			return err
		})
		if err != nil {
			return fmt.Errorf("bus: set up consumer %s: %w", spec.Name, err)
		}
	}
	return nil
}

// Consumer returns the durable consumer of a function.
func (b *Bus) Consumer(ctx context.Context, name string) (jetstream.Consumer, error) {
	c, err := b.js.Consumer(ctx, b.cfg.Stream, name)
	if err != nil {
		return nil, fmt.Errorf("bus: consumer %s: %w", name, err)
	}
	return c, nil
}

// IsNotFound reports whether err says a stream, consumer or key is missing.
func IsNotFound(err error) bool {
	return errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, jetstream.ErrKeyNotFound)
}
