package events

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// W3C trace context: "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>".
var traceParentRE = regexp.MustCompile(`^00-([a-f0-9]{32})-([a-f0-9]{16})-([a-f0-9]{2})$`)

func hashHex(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// rootTraceParent starts a trace for a root event, derived from its id so a
// redelivered webhook keeps its trace.
func rootTraceParent(id string) string {
	return "00-" + hashHex("trace:"+id, 32) + "-" + hashHex("span:"+id, 16) + "-01"
}

// childTraceParent continues parent's trace with a span derived from the
// child id; an absent or malformed parent starts a trace from the input id.
func childTraceParent(parent, inputID, childID string) string {
	m := traceParentRE.FindStringSubmatch(parent)
	if m == nil {
		return "00-" + hashHex("trace:"+inputID, 32) + "-" + hashHex("span:"+childID, 16) + "-01"
	}
	return "00-" + m[1] + "-" + hashHex("span:"+childID, 16) + "-" + m[3]
}

// TraceID returns the trace id of a traceparent value, or "".
func TraceID(traceParent string) string {
	m := traceParentRE.FindStringSubmatch(traceParent)
	if m == nil {
		return ""
	}
	return m[1]
}
