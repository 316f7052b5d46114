package probe

import (
	"maps"
	"time"
)

// maxSamples is how many recent failures Counts keeps.
const maxSamples = 10

// Counts are what the probe counted since it started, as of At.
type Counts struct {
	At time.Time `json:"at"`
	// Sent requests; Sent - OK - Failed are still in flight.
	Sent   int64 `json:"sent"`
	OK     int64 `json:"ok"`
	Failed int64 `json:"failed"`
	// Why requests failed; they add up to Failed.
	Refused     int64 `json:"refused"`
	Reset       int64 `json:"reset"`
	Timeout     int64 `json:"timeout"`
	ServerError int64 `json:"serverError"`
	Other       int64 `json:"other"`
	// Versions counts ok answers by version; FailedVersions counts
	// failed answers (5xx, other codes) by the version they named.
	Versions       map[string]int64 `json:"versions"`
	FailedVersions map[string]int64 `json:"failedVersions"`
	// Samples are the latest failures, oldest first.
	Samples []Sample `json:"samples,omitempty"`
}

// Sample is one failed request.
type Sample struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// InFlight is the number of requests sent and not yet ended.
func (c Counts) InFlight() int64 { return c.Sent - c.OK - c.Failed }

// Sub is what was counted between earlier and c, both from the same
// probe: a window opened by taking earlier. Samples are those after
// earlier.At.
func (c Counts) Sub(earlier Counts) Counts {
	d := Counts{
		At: c.At, Sent: c.Sent - earlier.Sent, OK: c.OK - earlier.OK, Failed: c.Failed - earlier.Failed,
		Refused: c.Refused - earlier.Refused, Reset: c.Reset - earlier.Reset, Timeout: c.Timeout - earlier.Timeout,
		ServerError: c.ServerError - earlier.ServerError, Other: c.Other - earlier.Other,
		Versions: subMap(c.Versions, earlier.Versions), FailedVersions: subMap(c.FailedVersions, earlier.FailedVersions),
	}
	for _, s := range c.Samples {
		if s.At.After(earlier.At) {
			d.Samples = append(d.Samples, s)
		}
	}
	return d
}

func subMap(now, before map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range now {
		if n := v - before[k]; n != 0 {
			d[k] = n
		}
	}
	return d
}

// clone is a deep copy of c.
func (c Counts) clone() Counts {
	c.Versions = maps.Clone(c.Versions)
	c.FailedVersions = maps.Clone(c.FailedVersions)
	c.Samples = append([]Sample(nil), c.Samples...)
	return c
}
