package history_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/pkg/tools/history/historytest"
	"github.com/inplace-dev/inplace/test/world"
)

func rolloutOf(t *testing.T) historytest.Rollout {
	t.Helper()
	return historytest.Rollout{
		Push:     events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0", Origin: "distribution"},
		Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Pods: []historytest.Pod{{Name: "web-0", UID: "uid-0", Node: "node-1", Wave: 1},
			{Name: "web-1", UID: "uid-1", Node: "node-1", Wave: 2}},
		Start: time.Now().Add(-time.Minute), Step: 100 * time.Millisecond,
	}
}

// stored publishes the rollout's events on a fresh bus and opens the stream.
func stored(t *testing.T) (*bus.Bus, *history.Stream, []cloudevents.Event) {
	t.Helper()
	b := bustest.New(t, nil)
	evs, err := rolloutOf(t).Events()
	if err != nil {
		t.Fatal(err)
	}
	if err := historytest.Publish(t.Context(), b, evs); err != nil {
		t.Fatal(err)
	}
	s, err := history.Open(t.Context(), b.JetStream(), b.Config().Stream)
	if err != nil {
		t.Fatal(err)
	}
	return b, s, evs
}

func read(t *testing.T, s *history.Stream, q history.Query) []string {
	t.Helper()
	var got []string
	err := s.Read(t.Context(), q, func(r history.Record) error {
		got = append(got, events.Short(r.Event.Type()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestReadStopsAtTheEnd(t *testing.T) {
	b, s, evs := stored(t)
	if s.Prefix() != "inplace" || s.DedupWindow() != b.Config().DuplicateWindow() {
		t.Errorf("prefix %q dedup %s", s.Prefix(), s.DedupWindow())
	}
	if got := read(t, s, history.Query{}); len(got) != len(evs) {
		t.Errorf("read %d records; want %d: %v", len(got), len(evs), got)
	}
	types := []string{"upgrade.succeeded", "rollout.completed"}
	want := []string{"upgrade.succeeded", "upgrade.succeeded", "rollout.completed"}
	if diff := cmp.Diff(want, read(t, s, history.Query{Filter: history.Filter{Types: types}})); diff != "" {
		t.Errorf("typed (-want +got):\n%s", diff)
	}
	if got := read(t, s, history.Query{Filter: history.Filter{UpgradeID: "u-none"}}); len(got) != 0 {
		t.Errorf("unknown upgrade read %v", got)
	}
	if got := read(t, s, history.Query{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Errorf("a start after the last message read %v", got)
	}
	if got := read(t, s, history.Query{Until: time.Now().Add(-time.Hour)}); len(got) != 0 {
		t.Errorf("an end before the first message read %v", got)
	}
}

func TestReadEmptyStream(t *testing.T) {
	b := bustest.New(t, nil)
	s, err := history.Open(t.Context(), b.JetStream(), b.Config().Stream)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, history.Query{}); len(got) != 0 {
		t.Errorf("empty stream read %v", got)
	}
	if _, err := history.Open(t.Context(), b.JetStream(), "NOPE"); err == nil {
		t.Error("a missing stream opened")
	}
}

func TestReadFollowsUntilCancelled(t *testing.T) {
	b, s, _ := stored(t)
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var got []string
	done := make(chan error, 1)
	go func() {
		done <- s.Read(ctx, history.Query{New: true, Follow: true, Filter: history.Filter{Types: []string{"rollout.resumed"}}},
			func(r history.Record) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, r.Event.ID())
				return nil
			})
	}()
	// Publish until the follower sees one (it may not be subscribed yet).
	i := 0
	if err := world.Eventually(t.Context(), 30*time.Second, "the follower to see a new event", func(ctx context.Context) (bool, error) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			return true, nil
		}
		i++
		e, err := events.New("resume-"+string(rune('a'+i%26))+time.Now().Format("150405.000000"), events.RolloutResumed, events.Source("cli"),
			"Deployment/shop/web", events.ResumeData{Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}})
		if err != nil {
			return false, err
		}
		return false, b.Publish(ctx, e)
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Read after cancel: %v", err)
	}
}

func TestDeadLettersAreRead(t *testing.T) {
	b, s, evs := stored(t)
	// Dead-letter a stored message the way the runner does.
	c, err := b.JetStream().OrderedConsumer(t.Context(), b.Config().Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"inplace.pod.patched"}})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DeadLetter(t.Context(), "verify", msg, "pod has no state"); err != nil {
		t.Fatal(err)
	}
	var dead []history.Record
	err = s.Read(t.Context(), history.Query{Filter: history.Filter{OnlyDeadLetters: true}}, func(r history.Record) error {
		dead = append(dead, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 {
		t.Fatalf("read %d dead letters; want 1", len(dead))
	}
	d := dead[0]
	want := &history.DeadLetter{Function: "verify", Reason: "pod has no state", Subject: "inplace.pod.patched", Deliveries: 1}
	if diff := cmp.Diff(want, d.Dead); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if d.Event.Type() != events.PodPatched || events.UpgradeID(d.Event) != events.UpgradeID(evs[3]) {
		t.Errorf("dead letter event = %s %s", d.Event.Type(), events.UpgradeID(d.Event))
	}
	if got := read(t, s, history.Query{}); len(got) != len(evs) {
		t.Errorf("a plain read shows %d records; want the %d events without the dead letter", len(got), len(evs))
	}
}

func TestPublishIsDeduplicated(t *testing.T) {
	_, s, evs := stored(t)
	dup, err := s.Publish(t.Context(), evs[0])
	if err != nil || !dup {
		t.Errorf("republishing a stored event: duplicate=%v err=%v", dup, err)
	}
	e := evs[0].Clone()
	e.SetID("fresh-id")
	if dup, err := s.Publish(t.Context(), e); err != nil || dup {
		t.Errorf("a new id: duplicate=%v err=%v", dup, err)
	}
}

func TestReadRollouts(t *testing.T) {
	b := bustest.New(t, nil)
	if got, err := history.ReadRollouts(t.Context(), b.JetStream(), b.Config().KVBucket); err != nil || len(got) != 0 {
		t.Fatalf("no bucket: %v, %v", got, err)
	}
	kv, err := b.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := history.ReadRollouts(t.Context(), b.JetStream(), b.Config().KVBucket); err != nil || len(got) != 0 {
		t.Fatalf("empty bucket: %v, %v", got, err)
	}
	r := rollout.Rollout{UpgradeID: "u-1", Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"},
		Phase: rollout.Running, Pods: map[string]*rollout.Pod{"web-0": {Name: "web-0", State: rollout.InFlight}}}
	raw, _ := json.Marshal(r)
	if _, err := kv.Update(t.Context(), rollout.Key(r.Workload), func([]byte) ([]byte, error) { return raw, nil }); err != nil {
		t.Fatal(err)
	}
	got, err := history.ReadRollouts(t.Context(), b.JetStream(), b.Config().KVBucket)
	if err != nil || len(got) != 1 || got[0].UpgradeID != "u-1" || got[0].Pods["web-0"].State != rollout.InFlight {
		t.Errorf("ReadRollouts = %+v, %v", got, err)
	}
	if _, err := kv.Update(t.Context(), "Deployment/shop/junk", func([]byte) ([]byte, error) { return []byte("{"), nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := history.ReadRollouts(t.Context(), b.JetStream(), b.Config().KVBucket); err == nil {
		t.Error("a value that is not a rollout was read")
	}
}
