// Package templatesync brings a workload's template along after its pods
// were upgraded in place, without a rollout: the next pod the controller
// makes (scale up, node loss) runs the new image, and the controller counts
// every existing pod as updated. No pod is deleted or recreated.
//
// The sequences are the ones verified against the real controllers
// (DESIGN.md "Keeping the workload in step"):
//   - Deployment: {spec.paused: true, template} in one patch; the current
//     ReplicaSet's template patched identically; paused restored. The
//     controller then finds that ReplicaSet equal to the template: no new
//     ReplicaSet, same revision.
//   - StatefulSet: partition = replicas with the template; once the
//     controller made the new revision, every pod relabelled to it; the
//     partition restored.
//   - DaemonSet: OnDelete with the template; every pod relabelled to the
//     newest ControllerRevision's hash; the strategy restored.
//
// Each call of Sync does one step and returns the progress to record; a
// crash between or inside steps is resumed by calling Sync again with the
// last recorded progress, since every step is idempotent. What the sync
// changed is recorded on the workload itself (inplace.dev/template-sync)
// until it is restored, so nothing is ever left paused, partitioned or
// switched. The images before the sync stay in inplace.dev/previous-images
// and in an Event, since `kubectl rollout undo` cannot return to them.
//
// A halted or rolled-back rollout never reaches the sync: its template is
// left untouched.
package templatesync
