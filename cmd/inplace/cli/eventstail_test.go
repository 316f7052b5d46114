package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/test/world"
)

// tail runs `inplace events tail args...` until the returned stop is called.
func (w *toolWorld) tail(t *testing.T, args ...string) (*syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- w.runTo(ctx, out, errOut, "", append([]string{"events", "tail"}, args...)...) }()
	return out, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("tail did not stop after cancel")
			return nil
		}
	}
}

// The filters select by type and upgrade id; events published after tail
// started appear too.
func TestTailFilters(t *testing.T) {
	w := newToolWorld(t)
	web, api := rolloutFor("web", "1.3.0", true), rolloutFor("api", "2.0.0", false)
	w.publish(t, chain(t, web))
	out, stop := w.tail(t, "--all", "--type", "upgrade.succeeded,upgrade.rolledback", "--type", "rollout.*", "--upgrade", web.UpgradeID())
	waitFor(t, out, "web's halt", func(s string) bool { return strings.Contains(s, "rollout.halted") })
	w.publish(t, chain(t, api)) // another upgrade: filtered out
	resume, err := events.New("resume-1", events.RolloutResumed, events.Source("cli"), web.Workload.String(),
		events.ResumeData{Workload: web.Workload, Reason: "image fixed"})
	if err != nil {
		t.Fatal(err)
	}
	resume.SetExtension(events.ExtUpgradeID, web.UpgradeID())
	w.publish(t, []cloudevents.Event{resume})
	waitFor(t, out, "the resume published after tail started", func(s string) bool { return strings.Contains(s, "rollout.resumed") })
	if err := stop(); err != nil {
		t.Fatalf("tail: %v", err)
	}
	got := out.String()
	for _, want := range []string{
		"upgrade.succeeded    shop/web-0               succeeded  [" + web.UpgradeID() + "]",
		"upgrade.rolledback   shop/web-1               rolledback ImagePullBackOff: Back-off pulling image \"registry.example/shop/web:1.3.0\"",
		"rollout.halted       Deployment/shop/web      halted 1/2 succeeded, 1 rolled back",
		"rollout.resumed      Deployment/shop/web      resumed image fixed",
	} {
		if len(linesWith(got, want)) != 1 {
			t.Errorf("want one line with %q in:\n%s", want, got)
		}
	}
	for _, absent := range []string{"upgrade.planned", "pod.patched", "image.pushed", "shop/api", api.UpgradeID()} {
		if strings.Contains(got, absent) {
			t.Errorf("filtered %q shown:\n%s", absent, got)
		}
	}
	if n := len(strings.Split(strings.TrimSpace(got), "\n")); n != 4 {
		t.Errorf("%d lines; want 4:\n%s", n, got)
	}
}

// By default tail starts with new events only.
func TestTailStartsWithNewEvents(t *testing.T) {
	w := newToolWorld(t)
	old := rolloutFor("web", "1.3.0", false)
	w.publish(t, chain(t, old))
	out, stop := w.tail(t)
	// tail subscribes asynchronously: publish fresh events until one shows.
	i := 0
	if err := world.Eventually(t.Context(), 30*time.Second, "tail to show a new event", func(context.Context) (bool, error) {
		if strings.Contains(out.String(), "shop/new-") {
			return true, nil
		}
		i++
		w.publish(t, chain(t, rolloutFor("new-"+string(rune('a'+i%26)), "9."+time.Now().Format("150405.000000"), false))[:1])
		return false, nil
	}); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "shop/web") {
		t.Errorf("events stored before tail started were shown:\n%s", out.String())
	}
}

func TestTailJSONAndDeadLetters(t *testing.T) {
	w := newToolWorld(t)
	web := rolloutFor("web", "1.3.0", false)
	evs := chain(t, web)
	w.publish(t, evs)
	deadLetter(t, w, "inplace.pod.patched", "verify", "pod has no state")
	out, stop := w.tail(t, "--all", "--dlq", "-o", "json", "--type", "pod.patched")
	waitFor(t, out, "three JSON lines", func(s string) bool { return strings.Count(s, "\n") >= 3 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var dead, patched int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		r, err := history.ParseLine([]byte(line))
		if err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, line)
		}
		if r.Event.Type() != events.PodPatched || r.Seq == 0 || r.Stored.IsZero() {
			t.Errorf("line %s: type %s seq %d stored %v", line, r.Event.Type(), r.Seq, r.Stored)
		}
		if r.Dead != nil {
			dead++
			if r.Dead.Function != "verify" || r.Dead.Reason != "pod has no state" {
				t.Errorf("dead letter %+v", r.Dead)
			}
		} else {
			patched++
		}
	}
	if dead != 1 || patched != 2 {
		t.Errorf("%d dead letters, %d pod.patched; want 1 and 2", dead, patched)
	}
	// Text mode names the function and the reason.
	out, stop = w.tail(t, "--all", "--dlq", "--type", "pod.patched")
	waitFor(t, out, "the dead letter line", func(s string) bool { return strings.Contains(s, "dlq/verify") })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(linesWith(out.String(), "pod.patched dead-lettered: pod has no state (after 1 deliveries)")) != 1 {
		t.Errorf("dead letter line missing:\n%s", out.String())
	}
}

// deadLetter copies the first message on subject to the dead-letter
// subject of function, as the runner does.
func deadLetter(t *testing.T, w *toolWorld, subject, function, reason string) {
	t.Helper()
	c, err := w.bus.JetStream().OrderedConsumer(t.Context(), w.bus.Config().Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.bus.DeadLetter(t.Context(), function, msg, reason); err != nil {
		t.Fatal(err)
	}
}

func TestTailRejectsBadFlags(t *testing.T) {
	w := newToolWorld(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--type", "upgrade.plannd"}, `unknown event type "upgrade.plannd"`},
		{[]string{"-o", "xml"}, `--output "xml"`},
		{[]string{"--since", "yesterday"}, "--since"},
		{[]string{"--since", "1h", "--all"}, "none of the others can be"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := w.run(t.Context(), t, "", append([]string{"events", "tail"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want %q", err, tt.want)
			}
		})
	}
}
