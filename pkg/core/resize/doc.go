// Package resize is the pure logic of changing a running container's CPU
// and memory in place (KEP-1287, GA in Kubernetes 1.35): what resources a
// request asks of a container, the guarded patch of the pods/resize
// subresource, and how far the kubelet got, read from the container
// status's resources and the pod's PodResizePending / PodResizeInProgress
// conditions.
//
// A resize never restarts a container unless a changed resource's
// resizePolicy says RestartContainer: then the kubelet restarts it once
// (restartCount+1). Progress tells which to expect.
//
// It does no I/O: compute-spec plans with it, patch-pod writes its patch,
// verify judges with it and rolls back with the same patch to the recorded
// resources.
package resize
