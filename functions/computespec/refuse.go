package computespec

import (
	"encoding/json"
	"fmt"
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/controller"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// EventRefused is the reason of the Warning Event on a workload a push was
// refused for.
const EventRefused = controller.EventRefused

// refuse records why push may not start a rollout of t (a Warning Event on
// the workload, a log line) and returns the reason, for the dead letter.
func (f *Function) refuse(t controller.Target, push events.UpgradeRequestData, err error) string {
	why := fmt.Sprintf("%s: %v", t.Workload.Ref, err)
	f.d.Log.Warn("push refused", "workload", t.Workload.Ref.String(), "push", push.Ref(), "why", err)
	if obj, ok := t.Workload.Object.(runtime.Object); ok && f.d.Recorder != nil {
		f.d.Recorder.Eventf(obj, corev1.EventTypeWarning, EventRefused, "Refused push %s: %v", push.Ref(), err)
	}
	return why
}

// refuseOperatorFields refuses, for good, an image.pushed that carries
// fields only an operator's upgrade.requested may (fields): a Warning
// Event on the workload it names, when that exists, and the reason, for
// the dead letter. Nothing is planned: the push is not taken without them
// either, since its publisher claimed what it may not.
func (f *Function) refuseOperatorFields(in cloudevents.Event, fields []string) error {
	why := fmt.Sprintf("image.pushed %s from %s carries %s, which only an operator's upgrade.requested may carry",
		in.Subject(), in.Source(), strings.Join(fields, ", "))
	f.d.Log.Warn("push refused", "event", in.ID(), "why", why)
	var claimed struct {
		Target *events.ObjectRef `json:"target"`
	}
	if json.Unmarshal(in.Data(), &claimed) == nil && claimed.Target != nil {
		f.ro.Event(*claimed.Target, corev1.EventTypeWarning, EventRefused, "Refused %s", why)
	}
	return settle.Permanentf("compute-spec: %s", why)
}
