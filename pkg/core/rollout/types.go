package rollout

import (
	corev1 "k8s.io/api/core/v1"

	"time"

	"github.com/inplace-dev/inplace/events"
)

// Phase of a rollout.
type Phase string

const (
	// Running: pods are being planned wave by wave.
	Running Phase = "Running"
	// Halted: a pod failed or was rolled back; nothing new is planned until
	// a newer push or an explicit resume.
	Halted Phase = "Halted"
	// Syncing: every pod runs the target; the workload template follows.
	Syncing Phase = "Syncing"
	// Completed: done, template synced (or why not, in Reason).
	Completed Phase = "Completed"
	// AwaitingApproval: a policy wants an approver's word before anything
	// is planned (Approval says why and until when).
	AwaitingApproval Phase = "AwaitingApproval"
	// Rejected: an approver said no, or nobody decided in time (Reason
	// Rejected or ApprovalExpired); nothing was planned.
	Rejected Phase = "Rejected"
	// Refused: the push was refused before planning (its signature);
	// Reason and Message say why.
	Refused Phase = "Refused"
)

// Finished reports whether the rollout needs nothing more.
func (p Phase) Finished() bool { return p == Completed || p == Rejected || p == Refused }

// PodState is where one pod stands in the rollout.
type PodState string

const (
	Pending    PodState = "Pending"
	InFlight   PodState = "InFlight"
	Succeeded  PodState = "Succeeded"
	Failed     PodState = "Failed"
	RolledBack PodState = "RolledBack"
	// Current: the pod needed nothing (already on the target, or every
	// container skipped).
	Current PodState = "Current"
	// Deleted: the pod was deleted or replaced while in flight; the rollout
	// goes on without it.
	Deleted PodState = "Deleted"
)

// Pod is one pod of the rollout.
type Pod struct {
	Name  string   `json:"name"`
	UID   string   `json:"uid"`
	Node  string   `json:"node,omitempty"`
	State PodState `json:"state"`
	// UpgradeID is the upgrade that planned the pod (it may be an older one
	// than the rollout's, when a newer push superseded it in flight).
	UpgradeID string `json:"upgradeID,omitempty"`
	Wave      int    `json:"wave,omitempty"`
	// PlannedAt is when the pod was put in flight: its deadlines count from it.
	PlannedAt time.Time `json:"plannedAt,omitzero"`
	// PlannedBy is the id of the input whose handling planned the pod, so a
	// redelivered input re-emits the same plans.
	PlannedBy string `json:"plannedBy,omitempty"`
	// Containers is the plan as emitted.
	Containers    []events.ContainerPlan `json:"containers,omitempty"`
	ReadinessGate bool                   `json:"readinessGate,omitempty"`
	Reason        string                 `json:"reason,omitempty"`
	// PatchedAt is when the attempt recorded Succeeded was patched: an
	// outcome of the same attempt saying otherwise may follow (undone).
	PatchedAt time.Time `json:"patchedAt,omitzero"`
	// Attempts counts the tries at the pod's upgrade: each plan (the first,
	// a re-plan when a halted rollout resumes) and each reminder of the
	// watchdog is one. The current try is Attempt().
	Attempts int `json:"attempts,omitempty"`
	// Reminded counts the watchdog's reminders of the wait that began at
	// RemindedFor (the plan, the patch or the rollback: Remind).
	Reminded    int       `json:"reminded,omitempty"`
	RemindedFor time.Time `json:"remindedFor,omitzero"`
	// Ended are the ends of earlier upgrades of a pod of this name, newest
	// first, as the rollouts before recorded them (EndOf).
	Ended []Ended `json:"ended,omitempty"`
}

// Attempt numbers the pod's current try from 0 (events.Plan.Attempt): its
// events' ids derive from it (inplace.StepID).
func (p *Pod) Attempt() int { return max(p.Attempts-1, 0) }

// Options are the workload's opt-in settings at the time of the push.
type Options struct {
	Budget        int  `json:"budget"`
	GraceSeconds  int  `json:"graceSeconds,omitempty"`
	Prepull       bool `json:"prepull"`
	VerifySeconds int  `json:"verifySeconds,omitempty"`
	// MinReadySeconds is the workload's spec.minReadySeconds.
	MinReadySeconds int `json:"minReadySeconds,omitempty"`
	// OrderByOrdinal: StatefulSet pods go highest ordinal first.
	OrderByOrdinal bool `json:"orderByOrdinal,omitempty"`
	// TemplateReference is how the template sync writes the images:
	// "tag@digest" (also when empty) or "tag".
	TemplateReference string `json:"templateReference,omitempty"`
}

// Rollout is the state of one workload's rollout, the value in the KV bucket.
type Rollout struct {
	UpgradeID string                    `json:"upgradeID"`
	Workload  events.ObjectRef          `json:"workload"`
	Push      events.UpgradeRequestData `json:"push"`
	Phase     Phase                     `json:"phase"`
	Options   Options                   `json:"options"`
	Pods      map[string]*Pod           `json:"pods"`
	Wave      int                       `json:"wave"`
	Reason    string                    `json:"reason,omitempty"`
	Message   string                    `json:"message,omitempty"`
	// Superseded names the upgrade this one replaced, if any.
	Superseded string `json:"superseded,omitempty"`
	// TraceParent is the push's W3C traceparent: what a rollout does
	// without an input of its own (a wake-up) stays in the push's trace.
	TraceParent string    `json:"traceParent,omitempty"`
	StartedAt   time.Time `json:"startedAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// ProgressAt is when a pod last changed state (planned, or its outcome
	// recorded): the watchdog halts a rollout that stalls past its deadline.
	ProgressAt time.Time `json:"progressAt,omitzero"`
	// Sync is the template sync's progress, once Syncing.
	Sync *Sync `json:"sync,omitempty"`
	// Gone are pods the rollout touched that left the workload: deleted or
	// replaced in flight (Deleted), or after their upgrade ended. They are
	// counted; a replacement of the same name is a pod of its own in Pods.
	Gone []*Pod `json:"gone,omitempty"`
	// HaltedBy and SettledBy name the input whose handling halted the
	// rollout or found every pod done, so a redelivered input re-emits the
	// same rollout.halted / completion events.
	HaltedBy  string `json:"haltedBy,omitempty"`
	SettledBy string `json:"settledBy,omitempty"`
	// History is what the workload rolled out before, by canonical
	// repository, carried from rollout to rollout: never backwards.
	History map[string]History `json:"history,omitempty"`
	// Approval is set when a policy asked an approver about this rollout.
	Approval *Approval `json:"approval,omitempty"`
	// Signer is who signed the pushed digest, when the workload requires
	// a signature (recorded on every upgrade.planned).
	Signer string `json:"signer,omitempty"`
	// Refusal is the last push refused for this workload while this
	// rollout went on (a refused push with no rollout in flight is a
	// rollout of its own, phase Refused).
	Refusal *Refusal `json:"refusal,omitempty"`
	// LastMoved is the last rollout before this one that moved pods,
	// carried from rollout to rollout: what `inplace undo` undoes while
	// this one has moved none (refused, rejected, awaiting approval).
	LastMoved *Moved `json:"lastMoved,omitempty"`
	// Restart is set when the rollout restarts containers in place on the
	// bytes they run (a container.restart.requested) instead of a push.
	Restart *Restart `json:"restart,omitempty"`
	// Resize is set when the rollout changes containers' CPU and memory in
	// place (a container.resize.requested) instead of a push.
	Resize *Resize `json:"resize,omitempty"`
	// Carried are the ends of the earlier rollouts' pods, by name, that
	// no pod entry carries yet: a pod entry made for that name takes them
	// over (Pod.Ended).
	Carried map[string][]Ended `json:"carried,omitempty"`
	// Analysis is set when the workload asks for a canary analysis
	// (inplace.dev/analysis): its steps come before the remaining waves.
	Analysis *Analysis `json:"analysis,omitempty"`
}

// Refusal is a push refused before planning.
type Refusal struct {
	Target  string    `json:"target"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// Sync records the template sync steps done, so a crash resumes it.
type Sync struct {
	Step string `json:"step"`
	// Images are the template images being set, by container.
	Images         map[string]string `json:"images,omitempty"`
	PreviousImages map[string]string `json:"previousImages,omitempty"`
	// Resources are, for a resize, the template resources being set, by
	// container.
	Resources map[string]corev1.ResourceRequirements `json:"resources,omitempty"`
	// FromRevision is the revision before the sync (StatefulSet
	// updateRevision) or the ReplicaSet patched (Deployment); Revision the
	// one pods are relabelled to.
	FromRevision string `json:"fromRevision,omitempty"`
	Revision     string `json:"revision,omitempty"`
	// Note says why the template was not (fully) synced, when it was not.
	Note string `json:"note,omitempty"`
	// Result is the outcome once Step is done (events.TemplateSynced, ...);
	// Reason its CamelCase cause when the template was not synced.
	Result string `json:"result,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Target is the pushed reference being rolled out, or what the request
// does.
func (r *Rollout) Target() string {
	if x := r.Request(); x != nil {
		return x.Target()
	}
	return r.Push.Ref()
}

// Key is the KV key of a workload's rollout.
func Key(w events.ObjectRef) string { return w.Kind + "/" + w.Namespace + "/" + w.Name }

// Candidate is a pod of the workload as the cluster shows it now, with what
// the push would change in it.
type Candidate struct {
	Pod   events.PodRef
	Ready bool
	// Ordinal is the StatefulSet ordinal, -1 otherwise.
	Ordinal int
	// Containers is what the push changes; empty means nothing to do.
	Containers    []events.ContainerPlan
	ReadinessGate bool
	// Why is set when Containers is empty: already on target, skipped, ...
	Why string
	// All are, for a restart, the plans of every requested container
	// (Containers keeps the current step's, see StepCandidates).
	All []events.ContainerPlan
	// Held: the pod's node is still pulling its images; it is not planned
	// yet (it would hold a max-unavailable slot for the pull's length).
	Held bool
	// Done is the upgrade the pod shows ended well with nothing left to
	// wait for (inplace.Done): while its outcome is on its way, its
	// max-unavailable slot is free already.
	Done string
}

// Counts tallies the pods by state, those gone from the workload included.
func (r *Rollout) Counts() events.Counts {
	c := events.Counts{Pods: len(r.Pods) + len(r.Gone)}
	for _, p := range r.all() {
		switch p.State {
		case Succeeded:
			c.Succeeded++
		case Failed:
			c.Failed++
		case RolledBack:
			c.RolledBack++
		case Current:
			c.Skipped++
		case Deleted:
			c.Deleted++
		}
	}
	return c
}

// all is every pod of the rollout, live and gone.
func (r *Rollout) all() []*Pod {
	out := make([]*Pod, 0, len(r.Pods)+len(r.Gone))
	for _, p := range r.Pods {
		out = append(out, p)
	}
	return append(out, r.Gone...)
}
