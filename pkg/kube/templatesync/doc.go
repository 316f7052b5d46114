// Package templatesync brings a workload's template along after its pods
// were upgraded in place, without a rollout: the next pod the controller
// makes (scale up, node loss) runs the new image, and the controller counts
// every existing pod as updated. No pod is deleted or recreated.
//
// The sequences are checked against the real controllers (DESIGN.md
// "Keeping the workload in step", research/k8s.md §4), and chosen so that
// `kubectl rollout status` never fails and counts fewer pods updated than
// before for as short a time as the controller allows:
//   - Deployment: {spec.paused: true, template} in one patch and, at once,
//     the current ReplicaSet's template patched identically; paused restored
//     once the controller's status shows it saw both. The controller then
//     finds that ReplicaSet equal to the template: no new ReplicaSet, same
//     revision. It may count the pods as not updated only if it computes a
//     status between the two patches.
//   - StatefulSet: held from the rollout's first plan (Hold): partition =
//     replicas, with the revision the sync will make for the planned images
//     (inplace.StatefulSetRevisionName) recorded, and patch-pod sets that
//     controller-revision-hash on each pod in its image write. The sync
//     takes the hold over: the template (partition = replicas kept); every
//     pod not labelled yet relabelled at once (none after a hold; its
//     status.updateRevision is checked after, and the pods relabelled again
//     if it differs); the strategy from before the hold restored. The
//     controller replaces no pod below the partition whatever its label,
//     so a pod labelled ahead is safe while the hold stands; a rollout
//     that halts (once no pod is in flight) and a sync that ends without
//     the template (not synced, left to GitOps) release it (Release),
//     labelling those pods back with the current revision first.
//   - DaemonSet: RollingUpdate kept. Every pod is labelled with the
//     template generation the template patch will make
//     (pod-template-generation), which the controller counts as updated,
//     then the template patched with a test of that generation (a failure
//     takes the labels back); then every pod relabelled to the newest
//     ControllerRevision's hash, which keeps counting once the template
//     changes again.
//
// Each call of Sync does one step (or a few that must follow each other at
// once) and returns the progress to record; a crash between or inside steps
// is resumed by calling Sync again with the last recorded progress, since
// every step is idempotent. What the sync changed is recorded on the
// workload itself (inplace.dev/template-sync) until it is restored, so
// nothing is ever left paused or partitioned. The change-cause
// (kubernetes.io/change-cause) is set with the template, so the revision a
// StatefulSet or DaemonSet gets, and the Deployment's ReplicaSet, say why in
// `kubectl rollout history`. The images before each of the last syncs stay,
// newest first, in inplace.dev/previous-images, and in an Event.
//
// After a resize (resize.go) the same sequences set the template's
// container resources instead of its images, for every kind; nothing is
// recorded in previous-images.
//
// A halted or rolled-back rollout never reaches the sync: its template is
// left untouched.
package templatesync
