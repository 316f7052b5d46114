package receiver

import (
	"fmt"
	"time"

	"github.com/inplace-dev/inplace/events"
)

// DefaultMaxAge bounds how long after its push a delivery is taken: the
// bus's dedup window drops a delivery replayed within it (the event id is
// derived from the push), so a delivery older than the window is refused
// here, and a captured delivery can never be replayed. Formats whose
// deliveries carry no time rely on the dedup window and on compute-spec,
// which never takes a workload backwards.
const DefaultMaxAge = 10 * time.Minute

// maxSkew is how far ahead of this clock a registry's may be: a delivery
// stamped further in the future would outlive the window.
const maxSkew = 5 * time.Minute

// resultStale labels deliveries refused as replays or too late.
const resultStale = "stale"

// fresh splits pushes into those recent enough to publish and the reasons
// the others are refused.
func fresh(pushes []events.ImagePushedData, now time.Time, maxAge time.Duration) ([]events.ImagePushedData, []string) {
	var ok []events.ImagePushedData
	var stale []string
	for _, p := range pushes {
		at := p.PushedAt
		switch {
		case at.IsZero():
			ok = append(ok, p)
		case now.Sub(at) > maxAge:
			stale = append(stale, fmt.Sprintf("%s: pushed at %s, more than %s ago: a replayed or stale delivery",
				p.Ref(), at.UTC().Format(time.RFC3339), maxAge))
		case at.Sub(now) > maxSkew:
			stale = append(stale, fmt.Sprintf("%s: pushed at %s, more than %s ahead of this clock",
				p.Ref(), at.UTC().Format(time.RFC3339), maxSkew))
		default:
			ok = append(ok, p)
		}
	}
	return ok, stale
}
