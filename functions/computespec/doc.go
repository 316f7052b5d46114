// Package computespec is the compute-spec function: from an image.pushed
// event it finds the workloads that opted in and run a container from the
// pushed repository, decides per container whether the push qualifies
// (policy, feasibility), and drives each workload's rollout wave by wave:
// every upgrade.succeeded frees a slot for the next pod, a failure or
// rollback halts the rollout, a newer push supersedes it, and when every pod
// runs the target the workload's template is brought along.
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
