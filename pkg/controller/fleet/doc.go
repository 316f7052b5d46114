// Package fleet is the hub's promotion controller: it moves one push
// through the member clusters of a fleet stage by stage (pkg/core/fleet
// decides; this package reads, writes and publishes).
//
// It is level-triggered and durable. Each push has a record in the hub's
// fleet KV bucket (keyed by the push's event id): the policy it started
// under, the stages released and when, approvals and analysis verdicts,
// the halt, and each member's last reported rollout outcomes. A client-go
// workqueue keyed by push id runs one decision at a time per push; every
// wake re-reads the record and decides from it alone, so a new controller
// on the same bucket (a hub restart) continues where the last one stopped.
// The bucket's watch wakes every push on start and after every write.
//
// A stage is released by publishing the push to each of its clusters
// (Releaser) with a message id derived from the push and the cluster, so a
// release published again (a crash between the publish and the record)
// is dropped by the stream's duplicate window, and then recorded; a
// recorded release is never published again.
//
// Members' reports are claims: the cluster is the one of the subject the
// report came on (fleet.<cluster>.rollout.>, which only that member may
// publish), never the report's body, and core/fleet.Apply takes only a
// newer outcome of this push's rollout of a policy workload in a released
// stage.
//
// It imports the pure core, the events contract and pkg/bus; never
// pkg/kube: the hub has no API server of its own to act on.
package fleet
