package events

import (
	"encoding/json"
	"fmt"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
)

// FromAPIServerSource adapts a Knative ApiServerSource event in Resource
// mode (type dev.knative.apiserver.resource.update or .add, data = the
// whole object) about a pod into pod.updated.
//
// ApiServerSource ids are random, so they are never used as dedup keys: the
// new id is derived from the pod's UID and resourceVersion, which makes two
// deliveries of the same pod state one event.
func FromAPIServerSource(e cloudevents.Event) (cloudevents.Event, error) {
	if e.Type() != APIServerSourceUpdate && e.Type() != APIServerSourceAdd {
		return e, permanent(e.Type(), fieldErr("type", "want "+APIServerSourceUpdate+" or "+APIServerSourceAdd))
	}
	var probe struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(e.Data(), &probe); err != nil {
		return e, permanent(e.Type(), decodeErr(err))
	}
	if probe.Kind != "Pod" || probe.APIVersion != "v1" {
		return e, permanent(e.Type(), fieldErr("data.kind", fmt.Sprintf("%s %q is not a v1 Pod (ApiServerSource must be in Resource mode on pods)", probe.APIVersion, probe.Kind)))
	}
	var pod corev1.Pod
	if err := json.Unmarshal(e.Data(), &pod); err != nil {
		return e, permanent(e.Type(), decodeErr(err))
	}
	pod.ManagedFields = nil
	data := PodUpdatedData{Pod: pod}
	if err := data.Validate(); err != nil {
		return e, permanent(e.Type(), err)
	}
	id := DeriveID(PodStateKey(&pod), PodUpdated, "")
	out, err := New(id, PodUpdated, Source("apiserversource"), pod.Namespace+"/"+pod.Name, data)
	if err != nil {
		return out, permanent(e.Type(), err)
	}
	if v := Ext(e, ExtTraceParent); v != "" {
		out.SetExtension(ExtTraceParent, childTraceParent(v, id, id))
	}
	return out, nil
}

// PodStateKey names one observed state of a pod: its UID and resourceVersion.
// Events derived from a pod state use it as their input id, so a resync or a
// second source reporting the same state yields the same event id.
func PodStateKey(pod *corev1.Pod) string {
	return "pod/" + string(pod.UID) + "/" + pod.ResourceVersion
}
