// Package rollout is the pure state machine of one workload's in-place
// rollout: which pods move next without exceeding max-unavailable, what an
// outcome changes, when a rollout halts, resumes, is superseded by a newer
// push, and when it is done; and what undoing the last rollout that moved
// pods goes back to (Undoable).
//
// A Rollout is stored as JSON in the NATS KV bucket and changed only through
// compare-and-swap, by compute-spec. Every transition here is a pure
// function of (state, candidates, input): it may run twice on the same
// input (a CAS retry, a redelivery) and must then produce the same result.
package rollout
