package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// exported parses export output into records.
func exported(t *testing.T, out string) []history.Record {
	t.Helper()
	var recs []history.Record
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		r, err := history.ParseLine([]byte(line))
		if err != nil {
			t.Fatalf("export wrote a line import cannot read: %v\n%s", err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

// eventView is what must survive an export/import round trip.
type eventView struct {
	ID, Type, Subject, Source, UpgradeID, TraceParent, Data string
	Time                                                    time.Time
}

func views(recs []history.Record) []eventView {
	out := make([]eventView, len(recs))
	for i, r := range recs {
		e := r.Event
		out[i] = eventView{ID: e.ID(), Type: e.Type(), Subject: e.Subject(), Source: e.Source(),
			UpgradeID: events.UpgradeID(e), TraceParent: events.Ext(e, events.ExtTraceParent), Data: string(e.Data()), Time: e.Time()}
	}
	return out
}

func TestExportImportRoundTrip(t *testing.T) {
	src := newToolWorld(t)
	web, api := rolloutFor("web", "1.3.0", true), rolloutFor("api", "2.0.0", false)
	webEvents := chain(t, web)
	src.publish(t, webEvents)
	src.publish(t, chain(t, api))
	deadLetter(t, src, "inplace.upgrade.planned", "pre-pull", "node gone")

	all, stderr, err := src.run(t.Context(), t, "", "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	recs := exported(t, all)
	wantN := len(webEvents) + len(chain(t, api))
	if len(recs) != wantN || !strings.Contains(stderr, fmt.Sprintf("exported %d events", wantN)) {
		t.Fatalf("exported %d records (%q); want %d events and no dead letter", len(recs), stderr, wantN)
	}
	for i, r := range recs {
		if r.Seq != uint64(i+1) || r.Dead != nil {
			t.Errorf("record %d: seq %d dead %v", i, r.Seq, r.Dead)
		}
	}

	// Filters: one upgrade, and a type within it.
	one, _, err := src.run(t.Context(), t, "", "events", "export", "--upgrade", web.UpgradeID())
	if err != nil {
		t.Fatal(err)
	}
	if got := exported(t, one); len(got) != len(webEvents)-1 { // the push carries no upgrade id
		t.Errorf("--upgrade exported %d; want %d", len(got), len(webEvents)-1)
	}
	typed, _, err := src.run(t.Context(), t, "", "events", "export", "--upgrade", web.UpgradeID(), "--type", "upgrade.planned")
	if err != nil {
		t.Fatal(err)
	}
	if got := exported(t, typed); len(got) != 2 || got[0].Event.Subject() != "shop/web-0" {
		t.Errorf("--type exported %v", views(got))
	}

	// Into a fresh stream: the same events, and a second import stores nothing.
	dst := newToolWorld(t)
	file := filepath.Join(t.TempDir(), "all.jsonl")
	if err := os.WriteFile(file, []byte(all), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := dst.run(t.Context(), t, "", "events", "import", file)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("imported %d events: %d new, 0 already in the stream", wantN, wantN); !strings.Contains(out, want) {
		t.Errorf("first import: %s", out)
	}
	back, _, err := dst.run(t.Context(), t, "", "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(views(recs), views(exported(t, back))); diff != "" {
		t.Errorf("round trip changed events (-exported +re-exported):\n%s", diff)
	}
	out, _, err = dst.run(t.Context(), t, all, "events", "import", "-")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("imported %d events: 0 new, %d already in the stream", wantN, wantN); !strings.Contains(out, want) {
		t.Errorf("second import (stdin): %s", out)
	}
}

func TestExportSinceUntil(t *testing.T) {
	w := newToolWorld(t)
	first := chain(t, rolloutFor("web", "1.3.0", false))
	w.publish(t, first)
	// The sleeps are the point: the two chains' stored times must lie on
	// either side of mid.
	time.Sleep(1100 * time.Millisecond)
	mid := time.Now().UTC()
	time.Sleep(100 * time.Millisecond)
	second := chain(t, rolloutFor("api", "2.0.0", false))
	w.publish(t, second)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"since", []string{"--since", mid.Format(time.RFC3339Nano)}, len(second)},
		{"until", []string{"--until", mid.Format(time.RFC3339Nano)}, len(first)},
		{"since duration", []string{"--since", "1h"}, len(first) + len(second)},
		{"until long ago", []string{"--until", "1h"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := w.run(t.Context(), t, "", append([]string{"events", "export"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := exported(t, out); len(got) != tt.want {
				t.Errorf("exported %d; want %d", len(got), tt.want)
			}
		})
	}
}

func TestImportIsAllOrNothing(t *testing.T) {
	src := newToolWorld(t)
	src.publish(t, chain(t, rolloutFor("web", "1.3.0", false)))
	all, _, err := src.run(t.Context(), t, "", "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(all), "\n")
	good := len(lines)
	// Line 3 is not JSON; line 4 lacks its plan's pod namespace; a blank
	// line; a dead letter from tail -o json.
	lines[2] = `{"specversion":"1.0",`
	lines[3] = strings.Replace(lines[3], `"namespace":"shop","name":"web-0"`, `"namespace":"","name":"web-0"`, 1)
	lines = append(lines, "", strings.Replace(lines[1], `"specversion"`, `"inplacedlqfunction":"verify","specversion"`, 1))
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	dst := newToolWorld(t)
	_, _, err = dst.run(t.Context(), t, "", "events", "import", file)
	if err == nil {
		t.Fatal("a file with malformed lines was imported")
	}
	for _, want := range []string{"3 malformed lines, nothing published", "line 3: not a CloudEvent",
		"line 4: event " + events.PodPatched + ": data.plan.pod.namespace: required", "line 16: a dead letter"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if out, _, _ := dst.run(t.Context(), t, "", "events", "export"); out != "" {
		t.Errorf("something was published:\n%s", out)
	}

	out, _, err := dst.run(t.Context(), t, "", "events", "import", "--skip-invalid", file)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("imported %d events: %d new", good-2, good-2); !strings.Contains(out, want) || !strings.Contains(out, "skipped 3 malformed lines") {
		t.Errorf("--skip-invalid: %s; want %q", out, want)
	}
	if back, _, _ := dst.run(t.Context(), t, "", "events", "export"); len(exported(t, back)) != good-2 {
		t.Errorf("stored %d events; want %d", len(exported(t, back)), good-2)
	}
}

// A bare server has no stream: import refuses, unless told to create it
// (for studying a history away from a live system).
func TestImportCreatesTheStreamWhenAsked(t *testing.T) {
	src := newToolWorld(t)
	evs := chain(t, rolloutFor("web", "1.3.0", false))
	src.publish(t, evs)
	all, _, err := src.run(t.Context(), t, "", "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	bare := &toolWorld{url: bustest.Server(t).URL()}
	if _, _, err := bare.run(t.Context(), t, all, "events", "import", "-", "--stream", "STUDY"); err == nil ||
		!strings.Contains(err.Error(), "STUDY: not found") {
		t.Fatalf("import into a missing stream: %v", err)
	}
	out, _, err := bare.run(t.Context(), t, all, "events", "import", "-", "--stream", "STUDY", "--create")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("imported %d events: %d new", len(evs), len(evs)); !strings.Contains(out, want) {
		t.Errorf("import --create: %s", out)
	}
	back, _, err := bare.run(t.Context(), t, "", "events", "export", "--stream", "STUDY")
	if err != nil {
		t.Fatal(err)
	}
	if got := exported(t, back); len(got) != len(evs) {
		t.Errorf("STUDY holds %d events; want %d", len(got), len(evs))
	}
}
