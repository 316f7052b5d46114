package inplace

import "errors"

// Names this package writes on pods and workloads.
const (
	// StateAnnotation holds the State of the pod's latest upgrade, as JSON.
	StateAnnotation = "inplace.dev/state"
	// ReadinessGate is the condition type of the readiness gate a pod
	// template may declare; verify sets it True after a successful upgrade.
	ReadinessGate = "inplace.dev/ready"
	// SyncAnnotation holds a workload's SyncRecord while its template sync
	// is under way (what to restore: paused, partition, update strategy).
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
