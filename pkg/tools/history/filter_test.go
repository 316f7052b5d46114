package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "upgrade.planned", want: "upgrade.planned"},
		{in: events.UpgradeRolledBack, want: "upgrade.rolledback"},
		{in: " pod.patched ", want: "pod.patched"},
		{in: "upgrade.*", want: "upgrade.*"},
		{in: "rollout.>", want: "rollout.>"},
		{in: events.CDServiceUpgraded, want: "service.upgraded"},
		{in: "service.rolledback", want: "service.rolledback"},
		{in: "upgrade.plannd", wantErr: `unknown event type "upgrade.plannd"`},
		{in: "up*.x", wantErr: "unknown event type"},
		{in: ">.x", wantErr: "unknown event type"},
		{in: "", wantErr: "unknown event type"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseType(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseType(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestMatchSubject(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"upgrade.planned", "upgrade.planned", true},
		{"upgrade.planned", "upgrade.plan", false},
		{"upgrade.*", "upgrade.rolledback", true},
		{"upgrade.*", "image.pushed", false},
		{"*.pushed", "image.pushed", true},
		{"rollout.>", "rollout.completed", true},
		{"rollout.>", "rollout", false},
		{">", "dev.cdevents.service.upgraded.0.2.0", true},
		{"upgrade.*", "upgrade.planned.extra", false},
	}
	for _, tt := range tests {
		if got := matchSubject(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchSubject(%q, %q) = %v; want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	recs := records(chainEvents(t, haltedRollout()))
	planned, pushed := recs[1], recs[0]
	if planned.Event.Type() != events.UpgradePlanned || pushed.Event.Type() != events.ImagePushed {
		t.Fatalf("fixture order changed: %s, %s", pushed.Event.Type(), planned.Event.Type())
	}
	dead := planned
	dead.Dead = &DeadLetter{Function: "pre-pull", Reason: "boom"}
	bad := Record{Seq: 9, Subject: "inplace.x", Err: errors.New("not an event")}
	id := haltedRollout().UpgradeID()
	tests := []struct {
		name string
		f    Filter
		r    Record
		want bool
	}{
		{"zero takes events", Filter{}, planned, true},
		{"zero drops dead letters", Filter{}, dead, false},
		{"zero shows unreadable", Filter{}, bad, true},
		{"type", Filter{Types: []string{"upgrade.planned"}}, planned, true},
		{"other type", Filter{Types: []string{"pod.patched"}}, planned, false},
		{"wildcard", Filter{Types: []string{"pod.patched", "upgrade.*"}}, planned, true},
		{"upgrade id", Filter{UpgradeID: id}, planned, true},
		{"push has no upgrade id", Filter{UpgradeID: id}, pushed, false},
		{"other upgrade", Filter{UpgradeID: "u-other"}, planned, false},
		{"typed filter hides unreadable", Filter{Types: []string{"upgrade.*"}}, bad, false},
		{"dlq on", Filter{DeadLetters: true, Types: []string{"upgrade.planned"}}, dead, true},
		{"dlq on, other type", Filter{DeadLetters: true, Types: []string{"pod.patched"}}, dead, false},
		{"only dlq drops events", Filter{OnlyDeadLetters: true}, planned, false},
		{"only dlq", Filter{OnlyDeadLetters: true, UpgradeID: id}, dead, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Match(tt.r); got != tt.want {
				t.Errorf("Match = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestFilterSubjects(t *testing.T) {
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, []string{"inplace.>"}},
		{"all with dlq", Filter{DeadLetters: true}, []string{"inplace.>"}},
		{"types", Filter{Types: []string{"upgrade.planned", "pod.patched", "upgrade.planned"}},
			[]string{"inplace.upgrade.planned", "inplace.pod.patched"}},
		{"types with dlq", Filter{Types: []string{"upgrade.planned"}, DeadLetters: true},
			[]string{"inplace.upgrade.planned", "inplace.dlq.>"}},
		{"wildcards may overlap", Filter{Types: []string{"upgrade.*", "upgrade.planned"}}, []string{"inplace.>"}},
		{"only dlq", Filter{OnlyDeadLetters: true, Types: []string{"upgrade.planned"}}, []string{"inplace.dlq.>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.f.Subjects("inplace")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Time{}, false},
		{"10m", now.Add(-10 * time.Minute), false},
		{"2h30m", now.Add(-150 * time.Minute), false},
		{"2026-11-20T10:02:11Z", t0, false},
		{"2026-11-20T11:02:11+01:00", t0, false},
		{"-5m", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTime(tt.in, now)
			if (err != nil) != tt.wantErr || !got.Equal(tt.want) {
				t.Errorf("ParseTime(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPassesOver(t *testing.T) {
	hdr := func(id string) nats.Header {
		h := nats.Header{}
		if id != "" {
			h.Set("ce-upgradeid", id)
		}
		return h
	}
	tests := []struct {
		name string
		f    Filter
		hdr  nats.Header
		want bool
	}{
		{"no upgrade filter", Filter{}, hdr("u-2"), false},
		{"same upgrade", Filter{UpgradeID: "u-1"}, hdr("u-1"), false},
		{"other upgrade", Filter{UpgradeID: "u-1"}, hdr("u-2"), true},
		{"no header: decode to know", Filter{UpgradeID: "u-1"}, hdr(""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.passesOver(tt.hdr); got != tt.want {
				t.Errorf("passesOver = %v; want %v", got, tt.want)
			}
		})
	}
}
