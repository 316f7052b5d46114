// Package guard re-derives, right before patch-pod or verify writes a pod,
// that the write is what compute-spec decided. A bus message and a pod's
// inplace.dev/state annotation are claims; the truth is the cluster and the
// rollout record compute-spec keeps in the KV bucket:
//
//   - the pod's owner, resolved from the API server (ownerReferences, UIDs
//     checked), has the rollout the claim names, and that record has this
//     pod (by UID) in flight under this upgrade with these containers;
//   - the owner still opts in, and its current policy allows each target;
//   - a rollback goes back to the images recorded when the pod was planned.
//
// A claim the record does not confirm is forged or stale: the caller records
// a Warning Event and dead-letters it with the reason, writing nothing. A
// real plan the owner no longer allows (opt-in removed, policy changed) is
// withdrawn: the caller reports the upgrade failed with the reason, writing
// nothing. The package never writes; compute-spec stays the only function
// that decides.
package guard
