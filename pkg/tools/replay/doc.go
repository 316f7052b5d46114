// Package replay feeds recorded events through the functions again.
//
// A replayed event is a copy with an id of its own, derived from the
// original's and the replay's name, and the inplacereplay extension naming
// the replay: the stream does not drop it as a duplicate, nobody mistakes it
// for a new event, and everything the functions derive from it carries the
// marker too (events.Follow).
//
// In a dry run the functions run in this process against a Kubernetes
// client whose every write is a server-side dry run, and against a copy of
// the rollout state in memory: the API server validates and computes each
// write, nothing is stored, and the changes are shown as diffs.
package replay
