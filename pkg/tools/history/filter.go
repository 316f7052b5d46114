package history

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/events"
)

// Filter selects records. The zero Filter selects every event and no dead letter.
type Filter struct {
	// Types are short type patterns ("upgrade.planned", "upgrade.*",
	// "rollout.>"), as returned by ParseType; empty selects every type.
	Types []string
	// UpgradeID selects events of one rollout (the upgradeid extension).
	UpgradeID string
	// DeadLetters includes dead-lettered copies; their original event's type
	// and upgrade id are matched.
	DeadLetters bool
	// OnlyDeadLetters selects dead letters alone.
	OnlyDeadLetters bool
}

// ParseType turns a --type value into a short type pattern: a project type
// in short ("upgrade.planned") or long form ("dev.inplace.upgrade.planned.v1"),
// or a pattern with NATS wildcards ("upgrade.*", "rollout.>").
func ParseType(s string) (string, error) {
	s = strings.TrimSpace(s)
	if events.Known(s) || strings.HasPrefix(s, events.CDEventsPrefix) {
		return events.Short(s), nil
	}
	if events.Long(s) != "" {
		return s, nil
	}
	if strings.ContainsAny(s, "*>") && validPattern(s) {
		return s, nil
	}
	known := make([]string, 0, len(events.Types))
	for _, t := range events.Types {
		known = append(known, events.Short(t))
	}
	return "", fmt.Errorf("unknown event type %q: use one of %s, or a pattern such as upgrade.*", s, strings.Join(known, ", "))
}

func validPattern(s string) bool {
	toks := strings.Split(s, ".")
	for i, t := range toks {
		if t == "" || (t == ">" && i != len(toks)-1) || (strings.ContainsAny(t, "*>") && len(t) > 1) {
			return false
		}
	}
	return true
}

// matchSubject reports whether the dotted name matches the NATS-style pattern.
func matchSubject(pattern, name string) bool {
	pt, nt := strings.Split(pattern, "."), strings.Split(name, ".")
	for i, p := range pt {
		if p == ">" {
			return len(nt) > i
		}
		if i >= len(nt) || (p != "*" && p != nt[i]) {
			return false
		}
	}
	return len(pt) == len(nt)
}

// Match reports whether f selects r. A record that could not be decoded is
// selected only by a filter without types and upgrade id (so tail shows it).
func (f Filter) Match(r Record) bool {
	if r.Dead != nil && !f.DeadLetters && !f.OnlyDeadLetters {
		return false
	}
	if r.Dead == nil && f.OnlyDeadLetters {
		return false
	}
	if r.Err != nil {
		return len(f.Types) == 0 && f.UpgradeID == ""
	}
	if f.UpgradeID != "" && events.UpgradeID(r.Event) != f.UpgradeID {
		return false
	}
	if len(f.Types) == 0 {
		return true
	}
	short := events.Short(r.Event.Type())
	for _, p := range f.Types {
		if matchSubject(p, short) {
			return true
		}
	}
	return false
}

// upgradeIDHeader is the upgradeid extension as a binary-mode NATS header.
const upgradeIDHeader = "ce-" + events.ExtUpgradeID

// passesOver reports whether a message can be skipped without decoding it:
// its headers name another upgrade than the one f selects.
func (f Filter) passesOver(hdr nats.Header) bool {
	if f.UpgradeID == "" {
		return false
	}
	v := hdr.Get(upgradeIDHeader)
	return v != "" && v != f.UpgradeID
}

// Subjects are the consumer filter subjects that deliver at least what f
// selects on a stream whose subjects start with prefix. Match narrows
// further: dead letters share the prefix, and overlapping patterns are
// read as the whole stream (a consumer's filters may not overlap).
func (f Filter) Subjects(prefix string) []string {
	dlq := prefix + ".dlq.>"
	if f.OnlyDeadLetters {
		return []string{dlq}
	}
	if len(f.Types) == 0 {
		return []string{prefix + ".>"}
	}
	seen := map[string]bool{}
	var subs []string
	for _, t := range f.Types {
		if strings.ContainsAny(t, "*>") || strings.HasPrefix(t, "dlq.") {
			return []string{prefix + ".>"}
		}
		s := prefix + "." + t
		if !seen[s] {
			seen[s] = true
			subs = append(subs, s)
		}
	}
	if f.DeadLetters {
		subs = append(subs, dlq)
	}
	return subs
}

// ParseTime reads a --since/--until value: a duration back from now
// ("10m", "2h") or an RFC 3339 time ("2026-11-20T10:02:11Z").
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("time %q: a duration back from now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: want a duration such as 10m or an RFC 3339 time such as 2026-11-20T10:02:11Z", s)
	}
	return t, nil
}
