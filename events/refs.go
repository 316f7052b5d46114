package events

import "fmt"

// PodRef names one pod; UID pins it so a replaced pod of the same name is
// never mistaken for the planned one.
type PodRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	Node      string `json:"node,omitempty"`
}

// String is "<namespace>/<name>", the subject of pod events.
func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

func (p PodRef) validate(path string) error {
	if p.Namespace == "" {
		return fieldErr(path+".namespace", "required")
	}
	if p.Name == "" {
		return fieldErr(path+".name", "required")
	}
	if p.UID == "" {
		return fieldErr(path+".uid", "required")
	}
	return nil
}

// ObjectRef names a workload (Deployment, StatefulSet, DaemonSet, ReplicaSet)
// or, for a bare pod, the pod itself.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// String is "<kind>/<namespace>/<name>", the key of a rollout.
func (o ObjectRef) String() string {
	return fmt.Sprintf("%s/%s/%s", o.Kind, o.Namespace, o.Name)
}

func (o ObjectRef) validate(path string) error {
	switch o.Kind {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod":
	case "":
		return fieldErr(path+".kind", "required")
	default:
		return fieldErr(path+".kind", fmt.Sprintf("%q is not Deployment, StatefulSet, DaemonSet, ReplicaSet or Pod", o.Kind))
	}
	if o.Namespace == "" {
		return fieldErr(path+".namespace", "required")
	}
	if o.Name == "" {
		return fieldErr(path+".name", "required")
	}
	return nil
}
