package history

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// ClockFormat is the time column of tail lines and trace steps.
const ClockFormat = "15:04:05.000"

// Line is r as one human-readable line, in loc:
//
//	15:04:05.000  upgrade.planned      shop/web-7d4b-x2lkq      wave 2 → registry/shop/web:1.3.0  [u-1a2b3c4d5e6f]
//
// time, short type, subject, detail (outcome events start with the
// outcome), and the upgrade id. A dead letter shows "dlq/<function>" as
// its type and the original type and reason as its detail.
func Line(r Record, loc *time.Location) string {
	clock := r.Time().In(loc).Format(ClockFormat)
	if r.Err != nil {
		return fmt.Sprintf("%s  %-20s %-24s unreadable message #%d: %v", clock, "?", r.Subject, r.Seq, r.Err)
	}
	e := r.Event
	typ, detail := events.Short(e.Type()), Detail(e)
	if r.Dead != nil {
		typ, detail = "dlq/"+r.Dead.Function, deadDetail(typ, r.Dead)
	}
	s := fmt.Sprintf("%s  %-20s %-24s %s", clock, typ, e.Subject(), detail)
	if id := events.UpgradeID(e); id != "" {
		s += "  [" + id + "]"
	}
	return Abbrev(strings.TrimRight(s, " "))
}

var digestRE = regexp.MustCompile(`sha256:([a-f0-9]{12})[a-f0-9]{52}`)

// Abbrev shortens every sha256 digest in s to its first 12 hex digits, as
// people read them ("sha256:0b31b1c02ff4"); JSON output keeps them whole.
func Abbrev(s string) string { return digestRE.ReplaceAllString(s, "sha256:$1") }

func deadDetail(typ string, d *DeadLetter) string {
	s := typ + " dead-lettered: " + d.Reason
	if d.Deliveries > 0 {
		s += fmt.Sprintf(" (after %d deliveries)", d.Deliveries)
	}
	return s
}
