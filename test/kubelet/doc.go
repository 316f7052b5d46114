// Package kubelet simulates the nodes of the test world: a kubelet on each
// node and a stand-in for kube-scheduler, both working only through the
// real API server (informers, a work queue per role, a pod synced by one
// worker at a time), so the real controllers see what they would see in a
// cluster.
//
// Nodes: New(client, Options{Nodes: N, ...}) and Start register N Node
// objects (Ready, capacity, pod CIDR, addresses, kubelet version) and keep
// them alive like a kubelet: Lease renewals in kube-node-lease and status
// heartbeats, so the node-lifecycle controller neither taints them nor
// evicts their pods. node.status.images lists each node's image store
// (names <repo>@sha256:… and <repo>:<tag>, sizeBytes).
//
// Scheduler: pending pods of Options.SchedulerName are bound through the
// pods/binding subresource to the least-loaded node that fits
// (nodeSelector, required node affinity including matchFields
// metadata.name as DaemonSet pods use, taints, pod count, cpu/memory
// requests); pods that fit nowhere get PodScheduled=False Unschedulable.
//
// Pods follow the kubelet: Pending (ContainerCreating / PodInitializing) →
// pull (events Pulling, Pulled) → Created, Started → Running → Ready after
// Timings.Start; init containers run to completion in order, sidecars
// (restartable init containers) start first and keep running; Ready is
// ContainersReady and every readiness gate's condition True (conditions
// written by others are kept, status writes retry on conflict from a fresh
// read). A changed image of a running container (regular or sidecar) is a
// definition change: Killing, stop, pull per imagePullPolicy (the node's
// image store makes IfNotPresent pulls free), start with restartCount+1, a
// new containerID and imageID, the old container as lastState; a completed
// init container is not re-run. A reference the resolver does not know gives
// Failed events and ErrImagePull/ImagePullBackOff with back-off, keeping
// the old image and imageID in the status, phase Running; it recovers when
// the image appears or the spec changes back. A crashing image gives
// CrashLoopBackOff with back-off. Containers of restartPolicy
// Never/OnFailure pods exit 0 after Timings.Run (phase Succeeded). A pod
// being deleted has its containers stopped (Killing) and is then deleted
// with grace 0 and a UID precondition. status.observedGeneration is the
// generation acted on.
//
// What a node pulls comes from an ImageResolver (the test registry in the
// test world); durations come from Timings. The package is test support:
// it must not be imported by production code and must not fake the API
// server's behaviour, only the node's.
package kubelet
