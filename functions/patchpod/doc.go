// Package patchpod is the patch-pod function: image.prepulled in,
// pod.patched out (or upgrade.failed when the pod is gone, replaced or
// changed by someone else, or upgrade.succeeded when it already runs the
// planned images).
//
// For a pod declaring the inplace.dev/ready readiness gate it first sets
// that condition False (status subresource, reason StartInPlaceUpdate; its
// message names the moment to the nanosecond, the lastTransitionTime only
// to the second), waits the plan's grace period from that moment, then
// until the pod is out of service (Ready not True, no ready endpoint in
// any EndpointSlice); a pod whose restarted containers all have a preStop
// hook is patched right after the gate's write instead (stopsAfterPreStop
// says why no request is lost). In `inplace run` the pod and EndpointSlice informers
// wake the waiting delivery at each change of the pod or of a slice
// holding it, and it decides again at once: timers are only the grace's
// end, the DrainTimeout deadline and a safety-net recheck; past its
// deadline the delivery answers "not yet" and the bus redelivers. Then it sends
// ONE JSON patch (inplace.Patch) that changes the planned images and writes
// the inplace.dev/state annotation, guarded by tests of what the decision
// read (the UID, the current images, the state, the restarted containers'
// status, the gate; not the resourceVersion, which the kubelet's Ready
// False after the gate moves); a failed test (the pod changed since it was
// read) makes it read the pod again and rebuild the patch.
//
// It is idempotent: a plan whose upgrade the pod already records is
// answered with the same pod.patched (same id) and no write. It never
// forces: a pod that is not the planned one any more is reported.
package patchpod
