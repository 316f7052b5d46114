package events

import "strings"

// TypePrefix starts every event type this project emits.
const TypePrefix = "dev.inplace."

// Event types (CloudEvents `type`), `dev.inplace.<noun>.<verb>.v1`.
const (
	ImagePushed        = "dev.inplace.image.pushed.v1"
	UpgradePlanned     = "dev.inplace.upgrade.planned.v1"
	ImagePrepulled     = "dev.inplace.image.prepulled.v1"
	PodPatched         = "dev.inplace.pod.patched.v1"
	PodUpdated         = "dev.inplace.pod.updated.v1"
	ContainerRestarted = "dev.inplace.container.restarted.v1"
	UpgradeSucceeded   = "dev.inplace.upgrade.succeeded.v1"
	UpgradeFailed      = "dev.inplace.upgrade.failed.v1"
	UpgradeRolledBack  = "dev.inplace.upgrade.rolledback.v1"
	RolloutCompleted   = "dev.inplace.rollout.completed.v1"
	RolloutHalted      = "dev.inplace.rollout.halted.v1"
	// RolloutResumed is an operator's command: resume a halted rollout.
	RolloutResumed = "dev.inplace.rollout.resumed.v1"
	// UpgradeApprovalRequested: compute-spec holds a rollout until it is
	// approved (a policy requires approval of this push).
	UpgradeApprovalRequested = "dev.inplace.upgrade.approval.requested.v1"
	// UpgradeApproved and UpgradeRejected are an approver's decision on a
	// rollout awaiting approval (`inplace approve` / `inplace reject`).
	UpgradeApproved = "dev.inplace.upgrade.approved.v1"
	UpgradeRejected = "dev.inplace.upgrade.rejected.v1"
	// UpgradeApprovalExpired: nobody decided in time; the rollout ended.
	UpgradeApprovalExpired = "dev.inplace.upgrade.approval.expired.v1"
)

// Types lists every type this project emits, in chain order.
var Types = []string{
	ImagePushed, UpgradeRequested, UpgradePlanned, ImagePrepulled, PodPatched, PodUpdated,
	ContainerRestarted, UpgradeSucceeded, UpgradeFailed, UpgradeRolledBack,
	RolloutCompleted, RolloutHalted, RolloutResumed,
	UpgradeApprovalRequested, UpgradeApproved, UpgradeRejected, UpgradeApprovalExpired,
	ContainerRestartRequested, ContainerRestartSucceeded, ContainerRestartFailed,
	ContainerResizeRequested, ContainerResizeSucceeded, ContainerResizeFailed,
}

// Foreign event types accepted as input and adapted onto the project's own.
const (
	// APIServerSourceUpdate is Knative ApiServerSource's Resource-mode update.
	APIServerSourceUpdate = "dev.knative.apiserver.resource.update"
	// APIServerSourceAdd is its Resource-mode add: every pod it lists when
	// it starts (after a restart too) and every new pod. Taken like an
	// update, it is the resync that a pod whose last update was sent
	// while no adapter ran (a new namespace restarts it) needs.
	APIServerSourceAdd = "dev.knative.apiserver.resource.add"
	// CDEventArtifactPublishedPrefix matches every version of CDEvents artifact.published.
	CDEventArtifactPublishedPrefix = "dev.cdevents.artifact.published."
)

// Extension attribute names.
const (
	// ExtUpgradeID names one rollout (all events of one push for one workload).
	ExtUpgradeID = "upgradeid"
	// ExtTraceParent is the W3C trace context of the CloudEvents distributed-tracing extension.
	ExtTraceParent = "traceparent"
	// ExtReplay marks an event fed again by `inplace replay`; its value names the replay.
	ExtReplay = "inplacereplay"
	// ExtReplayStart, "true" on a replayed image.pushed or rollout.resumed,
	// lets it start (or resume) a real rollout: `inplace replay
	// --start-rollouts`. Without it a replay starts nothing.
	ExtReplayStart = "inplacereplaystart"
)

// CDEventsPrefix starts every CDEvents type:
// dev.cdevents.<subject>.<predicate>.<version>.
const CDEventsPrefix = "dev.cdevents."

// Short returns the short form, <noun>.<verb>, of a project type
// ("image.pushed" for "dev.inplace.image.pushed.v1") and of a CDEvents type
// ("service.upgraded" for "dev.cdevents.service.upgraded.0.2.0"): the
// event's subject on the bus is inplace.<noun>.<verb>. Other types are
// returned unchanged.
func Short(typ string) string {
	switch {
	case strings.HasPrefix(typ, TypePrefix):
		s := strings.TrimPrefix(typ, TypePrefix)
		if i := strings.LastIndex(s, ".v"); i > 0 {
			s = s[:i]
		}
		return s
	case strings.HasPrefix(typ, CDEventsPrefix):
		parts := strings.SplitN(strings.TrimPrefix(typ, CDEventsPrefix), ".", 3)
		if len(parts) == 3 && parts[0] != "" && parts[1] != "" {
			return parts[0] + "." + parts[1]
		}
	}
	return typ
}

// CDTypes are the CDEvents this project emits.
var CDTypes = []string{CDServiceUpgraded, CDServiceRolledBack}

// Long is the inverse of Short for the types this project emits, its own
// and its CDEvents; it returns "" for a short name it does not know.
func Long(short string) string {
	for _, t := range append(Types[:len(Types):len(Types)], CDTypes...) {
		if Short(t) == short {
			return t
		}
	}
	return ""
}

// Known reports whether typ is one of the project's own types.
func Known(typ string) bool {
	for _, t := range Types {
		if t == typ {
			return true
		}
	}
	return false
}
