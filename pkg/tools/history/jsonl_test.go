package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

func TestLineRoundTrip(t *testing.T) {
	recs := records(chainEvents(t, haltedRollout()))
	dead := recs[3]
	dead.Dead = &DeadLetter{Function: "patch-pod", Reason: "event dev.inplace.pod.patched.v1: data.plan.pod.uid: required"}
	dead.Seq = 1 << 40 // beyond a CloudEvents integer
	for _, r := range append(recs, dead) {
		line, err := MarshalLine(r)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(line), "\n") {
			t.Fatalf("line %d spans lines", r.Seq)
		}
		got, err := ParseLine(line)
		if err != nil {
			t.Fatalf("ParseLine(%s): %v", line, err)
		}
		if got.Seq != r.Seq || !got.Stored.Equal(r.Stored) {
			t.Errorf("position: got seq %d stored %v; want %d %v", got.Seq, got.Stored, r.Seq, r.Stored)
		}
		if diff := cmp.Diff(r.Dead, got.Dead); diff != "" {
			t.Errorf("dead letter (-want +got):\n%s", diff)
		}
		// The event comes back as it was: no stream extensions left on it.
		if diff := cmp.Diff(eventJSON(t, r.Event), eventJSON(t, got.Event)); diff != "" {
			t.Errorf("event %s changed (-want +got):\n%s", r.Event.ID(), diff)
		}
	}
}

func eventJSON(t *testing.T, e cloudevents.Event) string {
	t.Helper()
	b, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMarshalLineIsStructuredCloudEvent(t *testing.T) {
	r := records(chainEvents(t, haltedRollout()))[1]
	line, err := MarshalLine(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"specversion":"1.0"`, `"type":"` + events.UpgradePlanned + `"`,
		`"upgradeid":"` + haltedRollout().UpgradeID() + `"`, `"inplaceseq":"2"`,
		`"inplacestored":"2026-11-20T10:02:11.251Z"`, `"data":{"upgradeID"`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("line lacks %s:\n%s", want, line)
		}
	}
	if _, err := MarshalLine(Record{Seq: 3, Err: errors.New("garbage")}); err == nil {
		t.Error("an unreadable record was marshalled")
	}
}

func TestParseLineErrors(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"not json", `{"specversion":`, "not a CloudEvent"},
		{"bad seq", `{"specversion":"1.0","id":"a","type":"t","source":"/s","inplaceseq":"x"}`, "inplaceseq"},
		{"bad stored", `{"specversion":"1.0","id":"a","type":"t","source":"/s","inplacestored":"today"}`, "inplacestored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseLine([]byte(tt.line)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want it to mention %s", err, tt.want)
			}
		})
	}
}

func TestCheckImport(t *testing.T) {
	good := records(chainEvents(t, haltedRollout()))[1]
	badData := good
	badData.Event = good.Event.Clone()
	if err := badData.Event.SetData(cloudevents.ApplicationJSON, map[string]any{"upgradeID": "u-1"}); err != nil {
		t.Fatal(err)
	}
	unknown := good
	unknown.Event = good.Event.Clone()
	unknown.Event.SetType("dev.inplace.pod.exploded.v1")
	dead := good
	dead.Dead = &DeadLetter{Function: "pre-pull", Reason: "x"}
	cd, err := events.New("cd-1", events.CDServiceUpgraded, events.Source("compute-spec"), "Deployment/shop/web", map[string]any{"context": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"valid", good, ""},
		{"cdevent", Record{Event: cd, Stored: time.Now()}, ""},
		{"bad data", badData, "data.pod.namespace"},
		{"unknown type", unknown, "not an event type"},
		{"dead letter", dead, "dead letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckImport(tt.r)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckImport = %v; want %q", err, tt.want)
			}
		})
	}
}
