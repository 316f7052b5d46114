package replay

import (
	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
)

// Mark returns the replayed copy of e for the replay called name. A copy
// starts no rollout (compute-spec refuses a replayed push or resume)
// unless start is set.
func Mark(e cloudevents.Event, name string, start bool) cloudevents.Event {
	c := e.Clone()
	c.SetID(events.DeriveID(e.ID(), "replay", name))
	c.SetExtension(events.ExtReplay, name)
	if start {
		c.SetExtension(events.ExtReplayStart, "true")
	}
	return c
}

// Takes reports whether the function named fn consumes events of typ
// (every function when fn is "").
func Takes(consumers map[string][]string, fn, typ string) bool {
	for name, types := range consumers {
		if fn != "" && name != fn {
			continue
		}
		for _, t := range types {
			if t == typ {
				return true
			}
		}
	}
	return false
}
