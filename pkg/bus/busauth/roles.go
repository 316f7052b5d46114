package busauth

import "github.com/inplace-dev/inplace/events"

// Identity names.
const (
	ComputeSpec = "compute-spec"
	PrePull     = "pre-pull"
	PatchPod    = "patch-pod"
	Verify      = "verify"
	Receiver    = "receiver"
	PodWatcher  = "pod-watcher"
	// Poller announces what registries say, like the receiver (pkg/inputs/poll).
	Poller = "poller"
	// Approver decides on rollouts awaiting approval (`inplace approve`,
	// `inplace reject`): it may publish upgrade.approved and
	// upgrade.rejected, and read the rollout records, nothing else.
	Approver = "approver"
	// FleetHub is a fleet hub's promotion controller (`inplace run
	// --fleet-hub`): it consumes the pushes on the hub's bus, keeps the
	// fleet records (FleetBucket), sets up and reads the hub's stream of
	// the members' outcomes and publishes each release to a member
	// (FleetSubjects).
	FleetHub = "fleet-hub"
	// Operator sets up the stream, consumers and buckets, and is what the
	// command line tools (tail, trace, replay, upgrade) connect as.
	Operator = "operator"
)

// Access to the rollout records.
type Access int

// Access levels.
const (
	None Access = iota
	Read
	Write
	// List: read, and list the keys (to find a rollout by its upgrade id).
	List
)

// Role is what one identity may do.
type Role struct {
	Name string
	// Consumer: it pulls from the durable consumer of its own name, acks
	// its messages, dead-letters them and counts their failures.
	Consumer bool
	// Leases: it takes leases under its own name (bus.Leases, bus.Leader);
	// a Consumer does too.
	Leases bool
	// Publishes are the event types it may publish.
	Publishes []string
	// Rollouts is its access to the rollout records.
	Rollouts Access
	// Subjects are further subjects it may publish to, beyond its events,
	// consumer and records (the fleet hub's).
	Subjects []string
	// All: everything (the operator).
	All bool
}

// Roles are the identities of the chain and what each may do.
func Roles() []Role {
	return []Role{
		{Name: ComputeSpec, Consumer: true, Rollouts: Write, Publishes: []string{
			events.UpgradePlanned, events.RolloutCompleted, events.RolloutHalted,
			events.PodPatched, // the watchdog's reminder to verify
			events.CDServiceUpgraded, events.CDServiceRolledBack,
			events.UpgradeApprovalRequested, events.UpgradeApprovalExpired,
			events.ContainerRestartSucceeded, events.ContainerRestartFailed,
			events.ContainerResizeSucceeded, events.ContainerResizeFailed,
			events.ContainerRestartRequested, // a ConfigMap or Secret changed (pkg/kube/reconfig)
			events.RolloutAnalysisMeasured, events.RolloutAnalysisPassed, events.RolloutAnalysisFailed,
			events.UpgradeRequested, // the undo of a canary whose analysis failed
		}},
		// pre-pull watches the records to pre-pull every node at once, on
		// one replica: the holder of its lease (bus.Leader; a Consumer
		// takes leases under its name)
		{Name: PrePull, Consumer: true, Rollouts: List,
			Publishes: []string{events.ImagePrepulled, events.UpgradeFailed}},
		// patch-pod and verify watch the records (bus.Watched: a read
		// cache of them, for the check of every step of every pod).
		{Name: PatchPod, Consumer: true, Rollouts: List, Publishes: []string{
			events.PodPatched, events.UpgradeFailed, events.UpgradeSucceeded}},
		{Name: Verify, Consumer: true, Rollouts: List, Publishes: []string{
			events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack}},
		{Name: Receiver, Publishes: []string{events.ImagePushed}},
		{Name: Poller, Publishes: []string{events.ImagePushed}},
		{Name: Approver, Rollouts: List, Publishes: []string{events.UpgradeApproved, events.UpgradeRejected}},
		{Name: FleetHub, Consumer: true, Subjects: FleetSubjects()},
		// one replica's pod watcher publishes, the lease holder's (bus.Leader)
		{Name: PodWatcher, Leases: true, Publishes: []string{events.PodUpdated, events.ContainerRestarted}},
		{Name: Operator, All: true},
	}
}

// RoleOf returns the role of an identity.
func RoleOf(name string) (Role, bool) {
	for _, r := range Roles() {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}

// InboxPrefix is the identity's inbox prefix: replies and pull deliveries
// come there, and only there may it subscribe.
func InboxPrefix(name string) string { return "_INBOX_" + name }
