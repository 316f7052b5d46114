// Package history reads the event stream for the operator's tools
// (`inplace events tail|export|import`, `inplace trace`, `inplace status`):
// it turns stream messages into Records (event, stream sequence, stored
// time, dead-letter facts), filters them, formats them as one-line
// summaries, JSON lines, traces of one rollout and a status table of the
// rollouts in the KV bucket.
//
// It sits beside the chain, never in it: it reads the stream through
// ephemeral ordered consumers and never creates, changes or acknowledges a
// durable consumer, nor changes the stream's configuration (it does not call
// bus.Connect, which would reset a stream configured by `inplace run`). The
// only write is Stream.Publish, used by import, which publishes events with
// their own ids so the stream's dedup window drops what it already holds.
//
// Formatting, filtering, trace building and status summaries are pure
// functions of their inputs; Stream is the thin I/O shell around them.
package history
