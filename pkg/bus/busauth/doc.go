// Package busauth is who may do what on the bus. Each function of the chain,
// the receiver and the pod watcher has an identity of its own (a NATS nkey,
// or a JWT user in an operator-mode cluster) whose permissions let it
// publish only its outputs and its dead letters, consume only its own
// durable consumer, read (compute-spec: write) the rollout records, count
// its own failed deliveries, and receive replies only on an inbox prefix of
// its own (_INBOX_<identity>), so it cannot read another's deliveries. The
// operator identity sets up the stream, consumers and buckets and serves
// the command line tools.
//
// Roles is the policy; Permissions turns a role into NATS subjects for a
// bus configuration; Ensure makes (or reads) the nkey seeds of a
// credentials directory, one <identity>.nk file each; Dial options connect
// as one identity; ServerConfig writes the same policy as a nats-server
// accounts block. The embedded server and config/nats apply the same
// permissions, so a test on one holds for the other.
package busauth
