// Package restart is the pure logic of restarting a running container in
// place without a node agent (OpenKruise's ContainerRecreateRequest through
// the API server alone).
//
// The kubelet restarts a container whose spec hash changed. A container's
// image may be changed on a live pod, so a restart is a switch of the image
// between two references to the same bytes: "repo:tag@sha256:d" and
// "repo@sha256:d", or a short and a fully qualified name. The running digest
// (the status imageID) is the same before and after; verify judges the
// restart by the containerID and restartCount, never by the image string.
// The next request switches back, to the reference the pod's
// inplace.dev/state annotation recorded.
//
// It does no I/O: compute-spec plans with it, the guard checks with it.
package restart
