package rollout

import (
	"fmt"
	"slices"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// maxLeft bounds the digests remembered as left behind, per repository.
const maxLeft = 64

// History is what a workload has rolled out of one repository, kept from
// rollout to rollout so that it never goes backwards, whatever its policy.
type History struct {
	// Digest and PushedAt are the newest push the workload rolled out.
	Digest   string    `json:"digest,omitempty"`
	Tag      string    `json:"tag,omitempty"`
	PushedAt time.Time `json:"pushedAt,omitzero"`
	// Left are the digests its pods ran and moved away from, oldest first.
	Left []string `json:"left,omitempty"`
}

// Dates are images' creation times by digest, as their registry says (the
// image config's created), for judging a push that carries no time.
type Dates map[string]time.Time

// before reports whether a was created before b, both dates known.
func (d Dates) before(a, b string) bool {
	ta, tb := d[a], d[b]
	return !ta.IsZero() && !tb.IsZero() && ta.Before(tb)
}

// Backwards says why push would take the workload backwards, or "": a push
// of a digest the workload has left, pushed before the newest push it
// rolled out, or, when the push carries no time, created (dates) before the
// digest the workload last rolled out. A push is otherwise judged on what
// it has.
func Backwards(h History, push events.ImagePushedData, dates Dates) string {
	switch {
	case push.Digest != "" && push.Digest == h.Digest:
		return ""
	case push.Digest != "" && slices.Contains(h.Left, push.Digest):
		return fmt.Sprintf("%s is a digest the workload already left (it last rolled out %s)", push.Digest, h.describe())
	case !push.PushedAt.IsZero() && !h.PushedAt.IsZero() && push.PushedAt.Before(h.PushedAt):
		return fmt.Sprintf("pushed at %s, before %s, which the workload already rolled out",
			push.PushedAt.UTC().Format(time.RFC3339), h.describe())
	case push.PushedAt.IsZero() && push.Digest != "" && h.Digest != "" && dates.before(push.Digest, h.Digest):
		return fmt.Sprintf("%s carries no push time, and its registry says it was created at %s, before %s (created at %s), which the workload already rolled out",
			push.Digest, dates[push.Digest].UTC().Format(time.RFC3339), h.describe(), dates[h.Digest].UTC().Format(time.RFC3339))
	}
	return ""
}

// Undated reports whether push is one whose dates Backwards would weigh:
// a push without a time, of a digest other than those h knows.
func Undated(h History, push events.ImagePushedData) bool {
	return push.PushedAt.IsZero() && push.Digest != "" && h.Digest != "" && push.Digest != h.Digest &&
		!slices.Contains(h.Left, push.Digest)
}

func (h History) describe() string {
	s := h.Tag
	if h.Digest != "" {
		s += "@" + h.Digest
	}
	if !h.PushedAt.IsZero() {
		s += " pushed at " + h.PushedAt.UTC().Format(time.RFC3339)
	}
	return s
}

// Advance records that the workload starts rolling out push, moving the
// pods of cands off what they run: their digests are left behind (but the
// pushed one), and the push is the newest unless an older one was rolled
// out on purpose (its time then does not lower the mark).
func Advance(h History, push events.ImagePushedData, cands []Candidate) History {
	next := History{Digest: push.Digest, Tag: push.Tag, PushedAt: push.PushedAt,
		Left: slices.Clone(h.Left)}
	if next.PushedAt.Before(h.PushedAt) {
		next.PushedAt = h.PushedAt
	}
	leave := func(d string) {
		if d != "" && d != push.Digest && !slices.Contains(next.Left, d) {
			next.Left = append(next.Left, d)
		}
	}
	leave(h.Digest)
	for _, c := range cands {
		for _, cp := range c.Containers {
			leave(imageref.DigestOf(cp.FromImageID))
		}
	}
	next.Left = slices.DeleteFunc(next.Left, func(d string) bool { return d == push.Digest })
	if len(next.Left) > maxLeft {
		next.Left = next.Left[len(next.Left)-maxLeft:]
	}
	return next
}
