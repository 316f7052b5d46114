package events

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resize event types: a request to change the CPU and/or memory of chosen
// containers of running pods in place (the pods/resize subresource), and
// how each request ended.
const (
	// ContainerResizeRequested: set these containers' CPU and/or memory on
	// a pod, or on every pod of a workload, in place (`inplace resize`).
	ContainerResizeRequested = "dev.inplace.container.resize.requested.v1"
	// ContainerResizeSucceeded: every pod of the request runs the new
	// resources.
	ContainerResizeSucceeded = "dev.inplace.container.resize.succeeded.v1"
	// ContainerResizeFailed: the request ended with pods not resized (they
	// were resized back); the kubelet's reason and message.
	ContainerResizeFailed = "dev.inplace.container.resize.failed.v1"
)

// ResizeRequestData (container.resize.requested): set these containers'
// CPU and/or memory on a pod, or on every pod of a workload, in place.
type ResizeRequestData struct {
	// Target is the workload (Deployment, StatefulSet, DaemonSet,
	// ReplicaSet) or the bare pod (Kind Pod).
	Target     ObjectRef `json:"target"`
	Containers []string  `json:"containers"`
	// CPU and Memory are quantities ("500m", "256Mi"); at least one. Each
	// sets the container's request, and its limit when the limit equalled
	// the request (a Guaranteed pod stays Guaranteed) or would be exceeded.
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
	// DeadlineSeconds bounds each pod's resize, from its patch; past it the
	// pod is resized back. 0: the workload's verify deadline.
	DeadlineSeconds int `json:"deadlineSeconds,omitempty"`
	// Reason is recorded in the pods' Events.
	Reason string `json:"reason,omitempty"`
}

// Validate implements Validator.
func (d ResizeRequestData) Validate() error {
	if err := validateRequest(d.Target, d.Containers, d.Reason); err != nil {
		return err
	}
	if d.CPU == "" && d.Memory == "" {
		return fieldErr("data", "name a cpu or a memory quantity")
	}
	for name, s := range map[string]string{"data.cpu": d.CPU, "data.memory": d.Memory} {
		if s == "" {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return fieldErr(name, fmt.Sprintf("%q is not a quantity", s))
		}
		if q.Sign() <= 0 {
			return fieldErr(name, "must be more than zero")
		}
	}
	if d.DeadlineSeconds < 0 {
		return fieldErr("data.deadlineSeconds", "must not be negative")
	}
	return nil
}

// ResizeResultData (container.resize.succeeded / .failed): how a resize
// request ended, over every pod it concerned.
type ResizeResultData struct {
	RequestID  string    `json:"requestID"`
	Target     ObjectRef `json:"target"`
	Containers []string  `json:"containers"`
	CPU        string    `json:"cpu,omitempty"`
	Memory     string    `json:"memory,omitempty"`
	Counts     Counts    `json:"counts"`
	// Template says what became of the workload's template (TemplateSynced,
	// ...), when the request moved pods.
	Template string `json:"template,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
}

// Validate implements Validator.
func (d ResizeResultData) Validate() error { return validateResult(d.RequestID, d.Target) }

// ResizePlan marks a plan (and a pod's state) as a resize: which request
// and why. The resources, from and to, are on each ContainerPlan.
type ResizePlan struct {
	RequestID string `json:"requestID"`
	Reason    string `json:"reason,omitempty"`
}

// ResizeResources are a container's resources before and after a resize
// (on a ContainerPlan of a resize).
type ResizeResources struct {
	From corev1.ResourceRequirements `json:"from"`
	To   corev1.ResourceRequirements `json:"to"`
}
