package bus_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
)

func pushed(t *testing.T, id string) cloudevents.Event {
	t.Helper()
	e, err := events.New(id, events.ImagePushed, events.Source("test"), "r/a:1",
		events.ImagePushedData{Registry: "r", Repository: "a", Tag: "1", Origin: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e.SetExtension(events.ExtUpgradeID, "u-1")
	return e
}

func streamMsgs(t *testing.T, b *bus.Bus, subject string) uint64 {
	t.Helper()
	s, err := b.JetStream().Stream(t.Context(), b.Config().Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context(), jetstreamSubjects(subject))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subject]
}

func TestPublishSameIDIsStoredOnce(t *testing.T) {
	b := bustest.New(t, nil)
	e := pushed(t, "same-id")
	dup, err := b.PublishAck(t.Context(), e)
	if err != nil || dup {
		t.Fatalf("first publish: duplicate=%v err=%v", dup, err)
	}
	dup, err = b.PublishAck(t.Context(), e)
	if err != nil || !dup {
		t.Fatalf("second publish: duplicate=%v err=%v; want duplicate", dup, err)
	}
	if err := b.Publish(t.Context(), pushed(t, "other-id")); err != nil {
		t.Fatal(err)
	}
	if got := streamMsgs(t, b, "inplace.image.pushed"); got != 2 {
		t.Errorf("stored %d messages; want 2 (one per distinct id)", got)
	}
}

func TestEncodeIsBinaryModeAndRoundTrips(t *testing.T) {
	e := pushed(t, "id-7")
	msg, err := bus.Encode(t.Context(), "inplace.image.pushed", e)
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]string{
		"ce-specversion": "1.0", "ce-id": "id-7", "ce-type": events.ImagePushed,
		"ce-upgradeid": "u-1", nats.MsgIdHdr: "id-7", "ce-datacontenttype": "application/json",
	} {
		if got := msg.Header.Get(h); got != want {
			t.Errorf("header %s = %q; want %q", h, got, want)
		}
	}
	var data events.ImagePushedData
	if err := json.Unmarshal(msg.Data, &data); err != nil || data.Repository != "a" {
		t.Errorf("body is not the event data: %s (%v)", msg.Data, err)
	}
	back, err := bus.Decode(t.Context(), msg.Subject, msg.Header, msg.Data)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != e.ID() || back.Type() != e.Type() || events.UpgradeID(back) != "u-1" || string(back.Data()) != string(e.Data()) {
		t.Errorf("round trip changed the event:\n%v\n%v", e, back)
	}
}

func TestDecodeAcceptsStructuredMode(t *testing.T) {
	e := pushed(t, "id-s")
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := bus.Decode(t.Context(), "inplace.image.pushed", nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != "id-s" || events.UpgradeID(back) != "u-1" {
		t.Errorf("structured decode: %v", back)
	}
	if _, err := bus.Decode(t.Context(), "x", nil, []byte("not an event")); err == nil {
		t.Error("garbage decoded without error")
	}
}

func TestSetupIsIdempotentAndFixesDrift(t *testing.T) {
	s := bustest.Server(t)
	nc := bustest.Conn(t, s)
	cfg := bustest.Config()
	log := slog.New(slog.DiscardHandler)
	b, err := bus.Connect(t.Context(), nc, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	spec := bus.ConsumerSpec{Name: "verify", Types: []string{events.PodPatched}}
	if err := b.EnsureConsumers(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	cfg.MaxAge = time.Hour
	cfg.AckWait = 7 * time.Second
	b2, err := bus.Connect(t.Context(), nc, cfg, log)
	if err != nil {
		t.Fatalf("second setup: %v", err)
	}
	spec.Types = append(spec.Types, events.PodUpdated)
	if err := b2.EnsureConsumers(t.Context(), spec); err != nil {
		t.Fatalf("second consumer setup: %v", err)
	}
	st, _ := b2.JetStream().Stream(t.Context(), cfg.Stream)
	if got := st.CachedInfo().Config.MaxAge; got != time.Hour {
		t.Errorf("stream MaxAge = %s; want the updated 1h", got)
	}
	c, err := b2.Consumer(t.Context(), "verify")
	if err != nil {
		t.Fatal(err)
	}
	ci := c.CachedInfo().Config
	if ci.AckWait != 7*time.Second || len(ci.FilterSubjects) != 2 {
		t.Errorf("consumer not updated: AckWait %s filters %v", ci.AckWait, ci.FilterSubjects)
	}
	if w := st.CachedInfo().Config.Duplicates; w < cfg.DuplicateWindow() {
		t.Errorf("dedup window %s shorter than %s", w, cfg.DuplicateWindow())
	}
}

func TestKVUpdateIsCompareAndSwap(t *testing.T) {
	b := bustest.New(t, nil)
	kv, err := b.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := kv.Update(context.Background(), "Deployment/shop/web", func(old []byte) ([]byte, error) {
				n, _ := strconv.Atoi(string(old))
				return []byte(strconv.Itoa(n + 1)), nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, rev, err := kv.Get(t.Context(), "Deployment/shop/web")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strconv.Itoa(writers) {
		t.Errorf("counter = %s after %d concurrent increments (lost updates)", got, writers)
	}
	if rev == 0 {
		t.Error("revision 0 for an existing key")
	}
	if v, _ := kv.Update(t.Context(), "Deployment/shop/web", func([]byte) ([]byte, error) { return nil, bus.ErrNoChange }); string(v) != string(got) {
		t.Errorf("ErrNoChange returned %q; want the unchanged %q", v, got)
	}
	if v, rev, _ := kv.Get(t.Context(), "missing"); v != nil || rev != 0 {
		t.Errorf("missing key = %q rev %d", v, rev)
	}
}

func TestConfigTimings(t *testing.T) {
	c := bus.DefaultConfig()
	if got := c.BackoffFor(1); got != time.Second {
		t.Errorf("BackoffFor(1) = %s", got)
	}
	if got := c.BackoffFor(100); got != time.Minute {
		t.Errorf("BackoffFor(100) = %s; want the last step", got)
	}
	// MaxDeliver × (AckWait + max backoff) per DESIGN.
	if got, want := c.DuplicateWindow(), time.Duration(c.RetryLimit)*(c.AckWait+time.Minute); got != want {
		t.Errorf("DuplicateWindow = %s; want %s", got, want)
	}
	if got := c.Subject(events.UpgradeRolledBack); got != "inplace.upgrade.rolledback" {
		t.Errorf("Subject = %s", got)
	}
	// CDEvents go inside the documented inplace.<noun>.<verb> scheme too
	// (before: inplace.dev.cdevents.service.upgraded.0.2.0).
	for typ, want := range map[string]string{events.CDServiceUpgraded: "inplace.service.upgraded",
		events.CDServiceRolledBack: "inplace.service.rolledback"} {
		if got := c.Subject(typ); got != want {
			t.Errorf("Subject(%s) = %s; want %s", typ, got, want)
		}
	}
}

func TestKVCountsItsWritesAndThoseThatLostTheSwap(t *testing.T) {
	b := bustest.New(t, nil)
	kv, err := b.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.KV(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const key = "Deployment/shop/web"
	if _, err := kv.Update(t.Context(), key, func([]byte) ([]byte, error) { return []byte("0"), nil }); err != nil {
		t.Fatal(err)
	}
	raced := false
	_, err = kv.Update(t.Context(), key, func(old []byte) ([]byte, error) {
		if !raced { // another writer gets in between this read and its write, once
			raced = true
			if _, err := other.Update(t.Context(), key, func([]byte) ([]byte, error) { return []byte("other"), nil }); err != nil {
				return nil, err
			}
		}
		return append(old, '+'), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := kv.Get(t.Context(), key); string(got) != "other+" {
		t.Errorf("value = %q, want the other writer's with this one's change on top", got)
	}
	if got := [2]int64{kv.Conflicts(), other.Conflicts()}; got != [2]int64{1, 0} {
		t.Errorf("conflicts (this writer, the other) = %v, want [1 0]", got)
	}
	if got := [2]int64{kv.Writes(), other.Writes()}; got != [2]int64{2, 1} {
		t.Errorf("writes (this writer, the other) = %v, want [2 1]", got)
	}
}
