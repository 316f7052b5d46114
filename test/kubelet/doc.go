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
// Pods follow the v1.35 kubelet's pod worker (pkg/kubelet/pod_workers.go,
// kubelet.go SyncPod, kuberuntime computePodActions), over a simulated
// container runtime: each sync first writes the status generated from the
// runtime as the last relist saw it and from the reason cache (what the
// previous sync's attempts to start containers ended with: ErrImagePull,
// ImagePullBackOff, CrashLoopBackOff, ...), then runs its actions (create
// the sandbox, after attaching and mounting the volumes of a pod that
// claims any; kill a container whose image changed, "Container X
// definition changed, will be restarted"; pull per imagePullPolicy;
// create and start), which keep the worker busy for their durations. The
// next sync waits for a relist after the previous one ended and runs on a
// pod change (spec, metadata, deletion, readiness gates to reconcile), on
// a relist (every Timings.RelistPeriod) that saw a container start or
// exit, or on a requeue (Timings.ErrorRequeue after a failed start, the
// end of a crash-loop back-off, else a minute). So, as on a real node:
// a new pod is first Pending without a sandbox (PodReadyToStartContainers
// False); a container without a readiness probe is ready in the same
// write as running; during an image-change restart nothing is written, the
// old container stays running and Ready until the status shows the new one
// running and Ready (restartCount+1, lastState terminated Completed, exit
// 0); a missing image shows ErrImagePull with the old image and imageID and
// the old container as lastState, then ImagePullBackOff, each one sync late;
// a container whose command names a program its image does not hold
// (Image.Programs), outside its volume mounts, fails to start as runc fails
// it ("Failed", terminated StartError 128, no "Started");
// a container that exits shows terminated (Error, 1 for a crashing image),
// its first restart is immediate, CrashLoopBackOff shows after a sync met
// the back-off; a pod that does not restart shows its containers terminated
// with PodCompleted conditions before its phase turns Succeeded (its
// sandbox stopped). Init containers run one at a time, sidecars (restartable
// init containers) keep running and restart on an image change; a completed
// init container is not re-run. The kubelet's conditions come after the
// others' (readiness gates are kept as written), PodScheduled=True
// included; container statuses carry resources. Events have the kubelet's
// 1.35 texts. A pod being deleted has its containers stopped (Killing
// "Stopping container") within its grace period and is then deleted with
// grace 0 and a UID precondition. node.status.images lists a pulled image
// after the next image list refresh (Timings.ImageListPeriod).
//
// What a node pulls comes from an ImageResolver (the test registry in the
// test world); durations come from Timings. The package is test support:
// it must not be imported by production code and must not fake the API
// server's behaviour, only the node's.
package kubelet
