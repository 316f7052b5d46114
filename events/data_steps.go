package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// PrepulledData (image.prepulled): the target image is on the pod's node, or
// why pre-pull was skipped.
type PrepulledData struct {
	Plan Plan   `json:"plan"`
	Node string `json:"node"`
	// PullMillis is how long the pull took, as pre-pull saw it: from
	// creating the pre-pull pod (its own clock, to the nanosecond) to
	// finding it done; 0 when skipped.
	PullMillis int64 `json:"pullMillis,omitempty"`
	// Skipped says why no pull was done ("disabled", "present on node").
	Skipped string `json:"skipped,omitempty"`
}

// Validate implements Validator.
func (d PrepulledData) Validate() error { return d.Plan.validate("data.plan") }

// PatchedData (pod.patched): the pod's images were changed in place.
type PatchedData struct {
	Plan            Plan      `json:"plan"`
	ResourceVersion string    `json:"resourceVersion"`
	PatchedAt       time.Time `json:"patchedAt"`
}

// Validate implements Validator.
func (d PatchedData) Validate() error {
	if err := d.Plan.validate("data.plan"); err != nil {
		return err
	}
	if d.ResourceVersion == "" {
		return fieldErr("data.resourceVersion", "required")
	}
	return nil
}

// PodUpdatedData (pod.updated): the pod as the API server has it now.
type PodUpdatedData struct {
	Pod corev1.Pod `json:"pod"`
}

// Validate implements Validator.
func (d PodUpdatedData) Validate() error {
	switch {
	case d.Pod.Namespace == "":
		return fieldErr("data.pod.metadata.namespace", "required")
	case d.Pod.Name == "":
		return fieldErr("data.pod.metadata.name", "required")
	case d.Pod.UID == "":
		return fieldErr("data.pod.metadata.uid", "required")
	}
	return nil
}

// ContainerRestartedData (container.restarted): a container's restartCount or
// containerID moved.
type ContainerRestartedData struct {
	Pod            PodRef `json:"pod"`
	Container      string `json:"container"`
	OldContainerID string `json:"oldContainerID,omitempty"`
	NewContainerID string `json:"newContainerID,omitempty"`
	RestartCount   int32  `json:"restartCount"`
	Image          string `json:"image,omitempty"`
	ImageID        string `json:"imageID,omitempty"`
}

// Validate implements Validator.
func (d ContainerRestartedData) Validate() error {
	if err := d.Pod.validate("data.pod"); err != nil {
		return err
	}
	if d.Container == "" {
		return fieldErr("data.container", "required")
	}
	return nil
}

// Outcome values of OutcomeData.
const (
	OutcomeSucceeded  = "succeeded"
	OutcomeFailed     = "failed"
	OutcomeRolledBack = "rolledback"
)

// OutcomeData (upgrade.succeeded / .failed / .rolledback): how one pod's
// upgrade ended.
type OutcomeData struct {
	Plan    Plan   `json:"plan"`
	Outcome string `json:"outcome"`
	// Reason is a CamelCase cause ("ImagePullBackOff", "Deadline", "PodReplaced").
	Reason string `json:"reason,omitempty"`
	// Message is the human text, including the kubelet's message when there is one.
	Message    string    `json:"message,omitempty"`
	PatchedAt  time.Time `json:"patchedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Containers reports what each container runs at the end.
	Containers []ContainerResult `json:"containers,omitempty"`
}

// ContainerResult is what one container ran when the upgrade ended.
type ContainerResult struct {
	Name         string `json:"name"`
	Image        string `json:"image"`
	ImageID      string `json:"imageID,omitempty"`
	RestartCount int32  `json:"restartCount"`
}

// Validate implements Validator.
func (d OutcomeData) Validate() error {
	if err := d.Plan.validate("data.plan"); err != nil {
		return err
	}
	switch d.Outcome {
	case OutcomeSucceeded, OutcomeFailed, OutcomeRolledBack:
		return nil
	case "":
		return fieldErr("data.outcome", "required")
	}
	return fieldErr("data.outcome", "must be succeeded, failed or rolledback, not "+d.Outcome)
}

// Counts are the per-pod tallies of a rollout.
type Counts struct {
	Pods       int `json:"pods"`
	Succeeded  int `json:"succeeded"`
	Failed     int `json:"failed"`
	RolledBack int `json:"rolledBack"`
	Skipped    int `json:"skipped"`
	// Deleted are pods deleted or replaced while the rollout had them in
	// flight; the rollout went on without them (a replacement is a pod of
	// its own).
	Deleted int `json:"deleted,omitempty"`
}

// Results of a template sync (TemplateOutcome.Result).
const (
	// TemplateSynced: the template was changed to the target without a rollout.
	TemplateSynced = "Synced"
	// TemplateCurrent: the template already showed the target.
	TemplateCurrent = "AlreadyCurrent"
	// TemplateNotSynced: the workload's state made a safe sync impossible;
	// the template still shows the old images.
	TemplateNotSynced = "NotSynced"
	// TemplateLeftToGitOps: a GitOps tool owns the template; the image to
	// write in Git is named.
	TemplateLeftToGitOps = "LeftToGitOps"
	// TemplateNone: the workload has no template (a bare pod) or template
	// sync is off.
	TemplateNone = "None"
)

// TemplateOutcome says what became of the workload's template.
type TemplateOutcome struct {
	Result string `json:"result"`
	// Reason is a CamelCase cause when the template was not synced
	// ("TwoActiveReplicaSets", "ManagedByArgoCD", "WorkloadDeleted").
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Images are what the template should show, by container: what was
	// written, or what to write (in Git, for LeftToGitOps).
	Images map[string]string `json:"images,omitempty"`
}

// RolloutData (rollout.completed / .halted): how a workload's rollout ended.
type RolloutData struct {
	UpgradeID string    `json:"upgradeID"`
	Workload  ObjectRef `json:"workload"`
	Target    string    `json:"target"`
	Counts    Counts    `json:"counts"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	// TemplateSynced says whether the workload template now shows the
	// target (Template.Result Synced or AlreadyCurrent), and nothing else.
	TemplateSynced bool `json:"templateSynced"`
	// Template says what became of the template, and why when it was not synced.
	Template *TemplateOutcome `json:"template,omitempty"`
	// PreviousImages maps container name to the template image before the sync.
	PreviousImages map[string]string `json:"previousImages,omitempty"`
	// Analysis is the verdict of the rollout's canary analysis: Passed on a
	// completed rollout whose every step passed, Failed or Inconclusive on
	// a halt it caused; empty for a rollout without one.
	Analysis string `json:"analysis,omitempty"`
}

// Validate implements Validator.
func (d RolloutData) Validate() error {
	if d.UpgradeID == "" {
		return fieldErr("data.upgradeID", "required")
	}
	if d.Target == "" {
		return fieldErr("data.target", "required")
	}
	return d.Workload.validate("data.workload")
}

// ResumeData (rollout.resumed): an operator resumes a halted rollout.
type ResumeData struct {
	Workload ObjectRef `json:"workload"`
	Reason   string    `json:"reason,omitempty"`
}

// Validate implements Validator.
func (d ResumeData) Validate() error { return d.Workload.validate("data.workload") }
