package poll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/inputs/keychain"
)

// Name is the poller's name in --functions and its events' source.
const Name = "poller"

// Origin is the origin of the pushes it announces.
const Origin = "poll"

// Deps are what the poller needs.
type Deps struct {
	// Watches lists the workloads that want polling, as the cluster shows
	// them now.
	Watches func() ([]Watch, error)
	// Secrets reads pull secrets.
	Secrets keychain.SecretGetter
	// Publish puts an image.pushed on the bus.
	Publish func(ctx context.Context, e cloudevents.Event) error
	// Transport reaches the registries; default http.DefaultTransport.
	Transport http.RoundTripper
	// Refresh is how often Watches is read again; default 10s.
	Refresh time.Duration
	Log     *slog.Logger
	Now     func() time.Time
	// Jitter returns a number in [0, 1); default math/rand.
	Jitter func() float64
}

// Poller asks registries what subscribed tags point at.
type Poller struct {
	d     Deps
	subs  map[string]*subState
	hosts *throttle
}

// subState is one subscription and what the poller announced for it. The
// announced digests are a courtesy to the bus (no repeated publish); what
// a push means is decided from durable state by compute-spec, so losing
// them in a restart only announces the current digests once more.
type subState struct {
	sub       Sub
	next      time.Time
	announced map[string]string
}

// New returns a poller.
func New(d Deps) *Poller {
	if d.Transport == nil {
		d.Transport = http.DefaultTransport
	}
	if d.Refresh <= 0 {
		d.Refresh = 10 * time.Second
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Jitter == nil {
		d.Jitter = rand.Float64
	}
	return &Poller{d: d, subs: map[string]*subState{}, hosts: newThrottle()}
}

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	var refreshAt time.Time
	for {
		now := p.d.Now()
		if !now.Before(refreshAt) {
			if err := p.refresh(now); err != nil {
				p.d.Log.Warn("poller: cannot list the workloads to poll", "err", err)
			}
			refreshAt = now.Add(p.d.Refresh)
		}
		wake := p.Step(ctx)
		if wake.IsZero() || wake.After(refreshAt) {
			wake = refreshAt
		}
		t := time.NewTimer(max(wake.Sub(p.d.Now()), 10*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// refresh reads the watches and keeps the subscriptions in step: a new
// one is polled soon (within a tenth of its interval, jittered, so a
// restart does not ask everything at once), one nobody wants is dropped.
func (p *Poller) refresh(now time.Time) error {
	ws, err := p.d.Watches()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, s := range Subscriptions(ws) {
		k := s.Key()
		keep[k] = true
		if cur, ok := p.subs[k]; ok {
			if next := now.Add(p.jittered(s.Interval)); s.Interval < cur.sub.Interval && next.Before(cur.next) {
				cur.next = next
			}
			cur.sub = s
			continue
		}
		p.subs[k] = &subState{sub: s, next: now.Add(time.Duration(p.d.Jitter() * float64(s.Interval) / 10)),
			announced: map[string]string{}}
	}
	for k := range p.subs {
		if !keep[k] {
			delete(p.subs, k)
		}
	}
	return nil
}

// Step polls every subscription that is due and returns when the next one
// is.
func (p *Poller) Step(ctx context.Context) time.Time {
	var wake time.Time
	for _, st := range p.subs {
		now := p.d.Now()
		if until, blocked := p.hosts.blocked(st.sub.Registry, now); blocked && until.After(st.next) {
			st.next = until
		}
		if !now.Before(st.next) {
			st.next = now.Add(p.poll(ctx, st))
		}
		if wake.IsZero() || st.next.Before(wake) {
			wake = st.next
		}
	}
	return wake
}

// jittered is the interval ±10%.
func (p *Poller) jittered(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*p.d.Jitter()))
}

// poll asks the registry about one subscription and announces what
// changed; it returns how long until the next poll.
func (p *Poller) poll(ctx context.Context, st *subState) time.Duration {
	s := st.sub
	log := p.d.Log.With("subscription", s.Key())
	err := p.ask(ctx, st)
	var terr *transport.Error
	switch {
	case err == nil:
		p.hosts.answered(s.Registry)
	case errors.As(err, &terr) && terr.StatusCode == http.StatusTooManyRequests:
		wait := p.hosts.limited(s.Registry, s.Interval, p.d.Now())
		log.Warn("poller: registry says too many requests; backing off", "registry", s.Registry, "for", wait)
		return wait
	case ctx.Err() != nil:
		return s.Interval
	default:
		log.Warn("poller: registry poll failed", "err", err)
	}
	return p.jittered(s.Interval)
}

func (p *Poller) ask(ctx context.Context, st *subState) error {
	s := st.sub
	kc, err := keychain.FromSecrets(ctx, p.d.Secrets, s.Secrets)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc),
		remote.WithTransport(noteRetryAfter{next: p.d.Transport, t: p.hosts}),
		remote.WithRetryStatusCodes(), remote.WithRetryBackoff(remote.Backoff{Steps: 1}), remote.WithUserAgent("inplace-poller")}
	repo, err := name.NewRepository(s.Registry + "/" + s.Repository)
	if err != nil {
		return err
	}
	tags := []string{s.Tag}
	if s.Tag == "" {
		all, err := remote.List(repo, opts...)
		if err != nil {
			return fmt.Errorf("list tags of %s: %w", repo, err)
		}
		tags = s.Targets(all)
	}
	for _, tag := range tags {
		d, err := remote.Head(repo.Tag(tag), opts...)
		if err != nil {
			return fmt.Errorf("head %s:%s: %w", repo, tag, err)
		}
		if err := p.announce(ctx, st, tag, d.Digest.String()); err != nil {
			return err
		}
	}
	return nil
}

// announce publishes the image.pushed of tag@digest unless it was the last
// announced for the tag. Its id is the one a webhook of the same push gets.
func (p *Poller) announce(ctx context.Context, st *subState, tag, digest string) error {
	if st.announced[tag] == digest {
		return nil
	}
	d := events.ImagePushedData{Registry: st.sub.Registry, Repository: st.sub.Repository, Tag: tag, Digest: digest, Origin: Origin}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("announce %s: %w", d.Ref(), err)
	}
	e, err := events.New(events.PushID(d), events.ImagePushed, events.Source(Name), d.Ref(), d)
	if err != nil {
		return err
	}
	if err := p.d.Publish(ctx, e); err != nil {
		return fmt.Errorf("publish %s: %w", d.Ref(), err)
	}
	p.d.Log.Info("poller: announced", "image", d.Ref(), "event", e.ID())
	st.announced[tag] = digest
	return nil
}
