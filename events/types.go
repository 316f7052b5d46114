package events

import "strings"

// TypePrefix starts every event type this project emits.
const TypePrefix = "dev.inplace."

// Event types (CloudEvents `type`), `dev.inplace.<noun>.<verb>.v1`. Each
// comment says what the event means; docs/reference.md lists them.
const (
	// ImagePushed: a registry (webhook or poller) says a tag now names a
	// digest. It carries what the registry said and nothing more.
	ImagePushed = "dev.inplace.image.pushed.v1"
	// UpgradePlanned: one pod moves now, as compute-spec decided: its
	// containers, from which image and imageID to which image
	// (digest-pinned), the grace period and whether to pre-pull.
	UpgradePlanned = "dev.inplace.upgrade.planned.v1"
	// ImagePrepulled: the plan's images are on the pod's node (with the
	// pull's duration), or pre-pull was skipped and why.
	ImagePrepulled = "dev.inplace.image.prepulled.v1"
	// PodPatched: the pod's new images and its state are written, in one
	// guarded patch by patch-pod (the resourceVersion after it).
	PodPatched = "dev.inplace.pod.patched.v1"
	// PodUpdated: a pod with an upgrade in flight changed (the pod
	// object, from the pod watcher or Knative's ApiServerSource). The pod
	// watcher leaves out patch-pod's own write of a plan, which its
	// pod.patched reports (a change that only records the Patched state,
	// with the status as it was), and the kubelet's writes on the way that
	// leave verify's decision as it was (inplace.Bearing: the old container
	// stopped, the new one created, while the completion check waits).
	PodUpdated = "dev.inplace.pod.updated.v1"
	// ContainerRestarted: a container of such a pod restarted (its old and
	// new containerID, restartCount), with or without a pod.updated of the
	// same change (which is what wakes verify): no function consumes it, it
	// is there for history and tracing.
	ContainerRestarted = "dev.inplace.container.restarted.v1"
	// UpgradeSucceeded: the pod's step is done: it runs the target images
	// (or the restart or resize a request asked), restarted as planned and
	// Ready. Every pod step of a rollout ends in this or the next two.
	UpgradeSucceeded = "dev.inplace.upgrade.succeeded.v1"
	// UpgradeFailed: the pod's step ended without its change and without
	// a rollback to report; the reason says why (a pull that failed, a
	// deadline, a plan its owner no longer allows).
	UpgradeFailed = "dev.inplace.upgrade.failed.v1"
	// UpgradeRolledBack: the pod's upgrade failed and the pod runs its
	// previous images again.
	UpgradeRolledBack = "dev.inplace.upgrade.rolledback.v1"
	// RolloutCompleted: every pod of a workload's rollout ended; the
	// counts, and what became of the template.
	RolloutCompleted = "dev.inplace.rollout.completed.v1"
	// RolloutHalted: a workload's rollout stopped on a failure, a
	// rollback or a deadline; the counts and the reason.
	RolloutHalted = "dev.inplace.rollout.halted.v1"
	// RolloutResumed is an operator's command: resume a halted rollout.
	RolloutResumed = "dev.inplace.rollout.resumed.v1"
	// UpgradeApprovalRequested: a rollout waits for an approver before
	// anything is planned (a policy requires approval of this push).
	UpgradeApprovalRequested = "dev.inplace.upgrade.approval.requested.v1"
	// UpgradeApproved is an approver's decision on a rollout awaiting
	// approval (`inplace approve`): plan it.
	UpgradeApproved = "dev.inplace.upgrade.approved.v1"
	// UpgradeRejected is an approver's decision on a rollout awaiting
	// approval (`inplace reject`): end it, planning nothing.
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
	RolloutAnalysisMeasured, RolloutAnalysisPassed, RolloutAnalysisFailed,
}

// Foreign event types accepted as input and adapted onto the project's own.
const (
	// APIServerSourceUpdate is Knative ApiServerSource's Resource-mode
	// update of a pod, taken as pod.updated.
	APIServerSourceUpdate = "dev.knative.apiserver.resource.update"
	// APIServerSourceAdd is Knative ApiServerSource's Resource-mode add:
	// every pod it lists when it starts (after a restart too) and every new
	// pod. Taken as pod.updated, it is the resync that a pod whose last
	// update was sent while no adapter ran (a new namespace restarts it)
	// needs.
	APIServerSourceAdd = "dev.knative.apiserver.resource.add"
	// CDEventArtifactPublishedPrefix matches every version of CDEvents
	// artifact.published, taken as image.pushed.
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
