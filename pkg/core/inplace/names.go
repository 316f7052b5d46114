package inplace

import "errors"

// Names this package writes on pods and workloads.
const (
	// StateAnnotation holds the pod's latest upgrade, restart or resize as
	// JSON: its id, the target images, and per container the
	// previous image, imageID, containerID and restartCount; the phase and
	// timestamps. Written in the same guarded patch as the image change.
	StateAnnotation = "inplace.dev/state"
	// ReadinessGate is the condition type of the readiness gate a pod
	// template may declare; verify sets it True once the kubelet has taken
	// the image patch up (the pod's Ready then follows the new containers'
	// readiness), or when the upgrade ends.
	ReadinessGate = "inplace.dev/ready"
	// SyncAnnotation holds, while a workload's template sync is under way,
	// what it changed and must restore (paused, partition, update
	// strategy), as JSON, so a crash never leaves it so.
	SyncAnnotation = "inplace.dev/template-sync"
	// RevisionLabel is the label StatefulSet and DaemonSet pods carry to
	// name their ControllerRevision.
	RevisionLabel = "controller-revision-hash"
)

var (
	// ErrAlreadyApplied: the object already shows the change (a redelivered
	// event); the caller should treat it as success and write nothing.
	ErrAlreadyApplied = errors.New("already applied")
	// ErrBusy: another upgrade or template sync is still under way on the
	// object; retry later.
	ErrBusy = errors.New("another change is under way")
)
