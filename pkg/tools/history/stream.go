package history

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus"
)

// Stream is read access to the event stream (and publishing for import),
// without changing its configuration.
type Stream struct {
	js     jetstream.JetStream
	name   string
	prefix string
	dedup  time.Duration
}

// Open looks up the stream; a missing stream is an error saying so (the
// tools never create it).
func Open(ctx context.Context, js jetstream.JetStream, name string) (*Stream, error) {
	s, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("open stream %s: not found (has `inplace run` set it up on this server?): %w", name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open stream %s: %w", name, err)
	}
	cfg := s.CachedInfo().Config
	prefix := bus.DefaultConfig().Prefix
	if len(cfg.Subjects) > 0 {
		prefix = strings.TrimSuffix(cfg.Subjects[0], ".>")
	}
	return &Stream{js: js, name: name, prefix: prefix, dedup: cfg.Duplicates}, nil
}

// Prefix is the first token of the stream's subjects ("inplace").
func (s *Stream) Prefix() string { return s.prefix }

// DedupWindow is how long the stream remembers event ids.
func (s *Stream) DedupWindow() time.Duration { return s.dedup }

// Query says which records Read delivers.
type Query struct {
	Filter Filter
	// Since starts at the first message stored at or after it; zero starts
	// at the beginning of the stream (unless New).
	Since time.Time
	// New starts with the messages stored after the read begins.
	New bool
	// StartSeq, when set, starts at this stream sequence.
	StartSeq uint64
	// Until stops at the first message stored after it.
	Until time.Time
	// Follow keeps waiting for new messages until ctx ends; otherwise Read
	// stops at the last message the stream held when it began.
	Follow bool
}

// Read calls fn with each record q selects, in stream order. It returns nil
// at the end (or when ctx ends while following), or fn's first error.
func (s *Stream) Read(ctx context.Context, q Query, fn func(Record) error) error {
	last, err := s.lastSeq(ctx)
	if err != nil {
		return err
	}
	if last == 0 && !q.Follow {
		return nil
	}
	c, err := s.js.OrderedConsumer(ctx, s.name, s.consumerConfig(q))
	if err != nil {
		return fmt.Errorf("read stream %s: %w", s.name, err)
	}
	it, err := c.Messages()
	if err != nil {
		return fmt.Errorf("read stream %s: %w", s.name, err)
	}
	defer it.Stop()
	if info := c.CachedInfo(); !q.Follow && info != nil && info.NumPending == 0 {
		return nil
	}
	return s.each(ctx, it, q, last, fn)
}

func (s *Stream) each(ctx context.Context, it jetstream.MessagesContext, q Query, last uint64, fn func(Record) error) error {
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil && q.Follow {
				return nil
			}
			return fmt.Errorf("read stream %s: %w", s.name, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("read stream %s: %w", s.name, err)
		}
		if !q.Until.IsZero() && md.Timestamp.After(q.Until) {
			return nil
		}
		if !q.Filter.passesOver(msg.Headers()) {
			r := FromMsg(ctx, msg.Subject(), msg.Headers(), msg.Data(), md.Sequence.Stream, md.Timestamp)
			if q.Filter.Match(r) {
				if err := fn(r); err != nil {
					return err
				}
			}
		}
		if !q.Follow && (md.NumPending == 0 || md.Sequence.Stream >= last) {
			return nil
		}
	}
}

func (s *Stream) consumerConfig(q Query) jetstream.OrderedConsumerConfig {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: q.Filter.Subjects(s.prefix),
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		// Long enough that a paused reader keeps its consumer.
		InactiveThreshold: 5 * time.Minute,
	}
	switch {
	case q.New:
		cfg.DeliverPolicy = jetstream.DeliverNewPolicy
	case q.StartSeq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, q.StartSeq
	case !q.Since.IsZero():
		since := q.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	return cfg
}

func (s *Stream) lastSeq(ctx context.Context) (uint64, error) {
	st, err := s.js.Stream(ctx, s.name)
	if err != nil {
		return 0, fmt.Errorf("read stream %s: %w", s.name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("read stream %s: %w", s.name, err)
	}
	return info.State.LastSeq, nil
}

// Publish puts e on the stream as bus.Publish does (binary mode, its id as
// Nats-Msg-Id, on the subject of its type) and says whether the stream
// dropped it as a duplicate.
func (s *Stream) Publish(ctx context.Context, e cloudevents.Event) (duplicate bool, err error) {
	cfg := bus.DefaultConfig()
	cfg.Prefix = s.prefix
	msg, err := bus.Encode(ctx, cfg.Subject(e.Type()), e)
	if err != nil {
		return false, err
	}
	ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithExpectStream(s.name))
	if err != nil {
		return false, fmt.Errorf("publish %s %s: %w", e.Type(), e.ID(), err)
	}
	return ack.Duplicate, nil
}
