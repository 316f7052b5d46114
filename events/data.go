package events

import (
	"fmt"
	"time"
)

// ImagePushedData (image.pushed): a registry says repository:tag (and maybe
// its digest) was pushed. It carries what a registry says and nothing more:
// who may upgrade which workload, and whether it may go back, is an
// operator's to say, in an upgrade.requested (UpgradeRequestData).
type ImagePushedData struct {
	// Registry is the canonical host ("docker.io", "localhost:5000").
	Registry string `json:"registry"`
	// Repository is the canonical path ("library/nginx").
	Repository string    `json:"repository"`
	Tag        string    `json:"tag,omitempty"`
	Digest     string    `json:"digest,omitempty"`
	PushedAt   time.Time `json:"pushedAt,omitzero"`
	// Origin is the webhook format it came from ("distribution", "harbor", ...,
	// "poll" for the registry poller, "manual" for `inplace upgrade`).
	Origin string `json:"origin"`
}

// Name is "<registry>/<repository>".
func (d ImagePushedData) Name() string { return d.Registry + "/" + d.Repository }

// Ref is the full reference, "<registry>/<repository>[:tag][@digest]".
func (d ImagePushedData) Ref() string {
	s := d.Name()
	if d.Tag != "" {
		s += ":" + d.Tag
	}
	if d.Digest != "" {
		s += "@" + d.Digest
	}
	return s
}

// Validate implements Validator.
func (d ImagePushedData) Validate() error {
	switch {
	case d.Registry == "":
		return fieldErr("data.registry", "required")
	case d.Repository == "":
		return fieldErr("data.repository", "required")
	case d.Tag == "" && d.Digest == "":
		return fieldErr("data.tag", "required when data.digest is empty")
	case d.Origin == "":
		return fieldErr("data.origin", "required")
	}
	return validateDigest("data.digest", d.Digest)
}

// ContainerPlan is the change planned for one container of a pod.
type ContainerPlan struct {
	Name string `json:"name"`
	// Sidecar marks a restartable init container (restartPolicy: Always);
	// plain init containers are never planned: an image change does not rerun them.
	Sidecar     bool   `json:"sidecar,omitempty"`
	FromImage   string `json:"fromImage"`
	FromImageID string `json:"fromImageID,omitempty"`
	// ToImage is the target, pinned to the digest when the push carried one.
	ToImage  string `json:"toImage"`
	ToDigest string `json:"toDigest,omitempty"`
	// PullPolicy is the container's imagePullPolicy, for pre-pull.
	PullPolicy string `json:"pullPolicy,omitempty"`
	// Resources is set on a resize's plan: the container's resources
	// before and after (its image stays: FromImage is ToImage).
	Resources *ResizeResources `json:"resources,omitempty"`
}

// Plan (upgrade.planned) is the upgrade of one pod.
type Plan struct {
	UpgradeID  string          `json:"upgradeID"`
	Pod        PodRef          `json:"pod"`
	Owner      ObjectRef       `json:"owner"`
	Containers []ContainerPlan `json:"containers"`
	// Target is the pushed reference that caused the plan.
	Target       string `json:"target"`
	Wave         int    `json:"wave"`
	GraceSeconds int    `json:"graceSeconds,omitempty"`
	Prepull      bool   `json:"prepull"`
	// ReadinessGate is set when the pod declares the inplace.dev/ready gate.
	ReadinessGate bool `json:"readinessGate,omitempty"`
	// VerifySeconds bounds how long verify waits before it rolls back.
	VerifySeconds int `json:"verifySeconds,omitempty"`
	// MinReadySeconds is the workload's spec.minReadySeconds: how long each
	// upgraded container must run Ready before verify calls it done.
	MinReadySeconds int       `json:"minReadySeconds,omitempty"`
	PlannedAt       time.Time `json:"plannedAt,omitzero"`
	// Signer is who signed the target digest, as compute-spec verified it
	// (a key, or a certificate's identity and issuer), when the workload
	// requires a signature.
	Signer string `json:"signer,omitempty"`
	// Restart is set when the plan restarts containers on the bytes they
	// run (a container.restart.requested) rather than upgrading them.
	Restart *RestartPlan `json:"restart,omitempty"`
	// Resize is set when the plan changes containers' CPU and memory in
	// place (a container.resize.requested) rather than their images.
	Resize *ResizePlan `json:"resize,omitempty"`
	// Attempt numbers this try at the pod's upgrade, from 0 (its first
	// plan): a re-plan when a halted rollout resumes and each reminder of
	// compute-spec's watchdog take the next, as the rollout record counts
	// them. Every step event of the try derives its id from it
	// (inplace.StepID), so a new try is never dropped as a copy of an
	// earlier one the stream still remembers.
	Attempt int `json:"attempt,omitempty"`
	// StepEvents is set when compute-spec planned this pod in a step of
	// more pods than it records Kubernetes Events for one by one: the
	// step's Normal Events are one on the workload, and patch-pod and
	// verify record none of their own on the pod (a refusal, a failure and
	// a rollback still have theirs).
	StepEvents bool `json:"stepEvents,omitempty"`
}

// Validate implements Validator.
func (p Plan) Validate() error { return p.validate("data") }

func (p Plan) validate(path string) error {
	if p.UpgradeID == "" {
		return fieldErr(path+".upgradeID", "required")
	}
	if err := p.Pod.validate(path + ".pod"); err != nil {
		return err
	}
	if err := p.Owner.validate(path + ".owner"); err != nil {
		return err
	}
	if len(p.Containers) == 0 {
		return fieldErr(path+".containers", "at least one container is required")
	}
	for i, c := range p.Containers {
		f := fmt.Sprintf("%s.containers[%d]", path, i)
		switch {
		case c.Name == "":
			return fieldErr(f+".name", "required")
		case c.FromImage == "":
			return fieldErr(f+".fromImage", "required")
		case c.ToImage == "":
			return fieldErr(f+".toImage", "required")
		}
		if err := validateDigest(f+".toDigest", c.ToDigest); err != nil {
			return err
		}
	}
	if p.GraceSeconds < 0 {
		return fieldErr(path+".graceSeconds", "must not be negative")
	}
	if p.Attempt < 0 {
		return fieldErr(path+".attempt", "must not be negative")
	}
	return nil
}

// Container returns the plan of the named container, or nil.
func (p *Plan) Container(name string) *ContainerPlan {
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return &p.Containers[i]
		}
	}
	return nil
}
