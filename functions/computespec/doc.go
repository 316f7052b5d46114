// Package computespec is the compute-spec function: from an image.pushed
// event (or an operator's upgrade.requested, a restart or resize request)
// it finds the workloads that opted in and run a container from the
// pushed repository, decides per container whether the push qualifies
// (policy, feasibility, signature, approval), and begins each workload's
// rollout: the record's first revision and the plans of its first pods.
// The rollout controller (pkg/controller) takes the rollout from there:
// outcomes, later waves, halts, the template sync, approvals, the
// watchdog. compute-spec's consumer delivers the controller's inputs too
// (Handle hands them over).
//
// It never takes a workload backwards, whatever its policy: a push of a
// digest the workload left, or pushed before the one it last rolled out
// (rollout.History), is refused with a Warning Event and dead-lettered with
// the reason, unless a manual upgrade says AllowOlder. An undo (inplace
// undo: a manual push naming the upgrade it undoes) is checked against the
// record, rollout.Undoable, and then planned in every wave under the undo
// policy, down a version if that is what the pods ran. A replayed push or
// resume starts nothing unless the replay asks to (inplace replay
// --start-rollouts).
//
// Rollout state lives in the NATS KV bucket, changed only by
// compute-and-swap (package rollout holds the pure transitions); the
// function keeps nothing in memory between events. It never patches pods:
// that is patch-pod's job.
package computespec
