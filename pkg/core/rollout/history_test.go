package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

const (
	dA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	dB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	dC = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func pushOf(tag, digest string, at time.Time) events.ImagePushedData {
	return events.ImagePushedData{Registry: "r", Repository: "shop/web", Tag: tag, Digest: digest, PushedAt: at, Origin: "test"}
}

func running(digest string) []Candidate {
	return []Candidate{{Pod: events.PodRef{Name: "web-0"}, Containers: []events.ContainerPlan{
		{Name: "app", FromImage: "r/shop/web:latest", FromImageID: "r/shop/web@" + digest, ToImage: "r/shop/web:latest@x"}}}}
}

// TestNeverBackwards: after rolling out B (pushed at t1) from A, a push of
// A, or of anything pushed before t1, is refused; a newer push is not.
func TestNeverBackwards(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h := Advance(History{}, pushOf("latest", dB, t0.Add(time.Minute)), running(dA))
	if diff := cmp.Diff(History{Digest: dB, Tag: "latest", PushedAt: t0.Add(time.Minute), Left: []string{dA}}, h); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	tests := []struct {
		name string
		push events.ImagePushedData
		want bool
	}{
		{"the digest it left", pushOf("latest", dA, t0.Add(time.Hour)), true},
		{"pushed before the last rollout", pushOf("latest", dC, t0), true},
		{"the left digest, no time", pushOf("latest", dA, time.Time{}), true},
		{"the same push again", pushOf("latest", dB, t0.Add(time.Minute)), false},
		{"newer", pushOf("latest", dC, t0.Add(2*time.Minute)), false},
		{"new digest, no time", pushOf("latest", dC, time.Time{}), false},
		{"no digest, newer", pushOf("1.2", "", t0.Add(2*time.Minute)), false},
		{"no digest, older", pushOf("1.2", "", t0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Backwards(h, tt.push, nil); (got != "") != tt.want {
				t.Errorf("Backwards = %q; want refused %v", got, tt.want)
			}
		})
	}
}

// TestUndatedPushByItsCreation: a push without a time, of a digest the
// workload never ran, is judged by when the registry says its image and
// the one last rolled out were created.
func TestUndatedPushByItsCreation(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h := Advance(History{}, pushOf("latest", dB, t0.Add(time.Minute)), running(dA))
	tests := []struct {
		name  string
		push  events.ImagePushedData
		dates Dates
		want  bool
	}{
		{"made before the one rolled out", pushOf("latest", dC, time.Time{}), Dates{dB: t0, dC: t0.Add(-time.Hour)}, true},
		{"made after", pushOf("latest", dC, time.Time{}), Dates{dB: t0, dC: t0.Add(time.Hour)}, false},
		{"made at the same time", pushOf("latest", dC, time.Time{}), Dates{dB: t0, dC: t0}, false},
		{"its date unknown", pushOf("latest", dC, time.Time{}), Dates{dB: t0}, false},
		{"the rolled out one's date unknown", pushOf("latest", dC, time.Time{}), Dates{dC: t0.Add(-time.Hour)}, false},
		{"a push time, which comes first", pushOf("latest", dC, t0.Add(2*time.Minute)), Dates{dB: t0, dC: t0.Add(-time.Hour)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Backwards(h, tt.push, tt.dates); (got != "") != tt.want {
				t.Errorf("Backwards = %q; want refused %v", got, tt.want)
			}
			if got := Undated(h, tt.push); got != tt.push.PushedAt.IsZero() {
				t.Errorf("Undated = %v for a push at %s", got, tt.push.PushedAt)
			}
		})
	}
}

// TestGoingBackOnPurpose: rolling out an older digest on purpose leaves the
// newer behind and keeps the newest push time, so neither the newer push
// replayed nor anything older comes back by itself.
func TestGoingBackOnPurpose(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h := Advance(History{}, pushOf("latest", dB, t0.Add(time.Minute)), running(dA))
	h = Advance(h, pushOf("latest", dA, t0), running(dB))
	if diff := cmp.Diff(History{Digest: dA, Tag: "latest", PushedAt: t0.Add(time.Minute), Left: []string{dB}}, h); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	if Backwards(h, pushOf("latest", dB, t0.Add(time.Minute)), nil) == "" {
		t.Error("the digest left on purpose may come back by itself")
	}
	if why := Backwards(h, pushOf("latest", dC, t0.Add(time.Hour)), nil); why != "" {
		t.Errorf("a newer push refused: %s", why)
	}
}

// TestHistoryCarriesOver: a new rollout keeps what the workload rolled out.
func TestHistoryCarriesOver(t *testing.T) {
	r := Begin(nil, "u-1", wl, push, Options{Budget: 1}, t0)
	r.History["r/shop/web"] = History{Digest: dB, Left: []string{dA}}
	r.Phase = Completed
	next := Begin(r, "u-2", wl, push, Options{Budget: 1}, t0)
	if diff := cmp.Diff(r.History, next.History); diff != "" {
		t.Errorf("history (-before +after):\n%s", diff)
	}
}
