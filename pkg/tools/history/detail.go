package history

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
)

// Detail is a short human summary of what e says, for tail lines and trace
// steps: "wave 2 → registry/shop/web:1.3.0", "rolledback ImagePullBackOff:
// Back-off pulling image ...". Outcome events start with their outcome.
func Detail(e cloudevents.Event) string {
	d, err := detail(e)
	if err != nil {
		return "(unreadable data: " + err.Error() + ")"
	}
	return d
}

func detail(e cloudevents.Event) (string, error) {
	switch e.Type() {
	case events.ImagePushed:
		return decoded(e, func(d events.ImagePushedData) string { return d.Ref() + " (" + d.Origin + ")" })
	case events.UpgradeRequested:
		return decoded(e, requestedDetail)
	case events.UpgradePlanned:
		return decoded(e, func(p events.Plan) string { return fmt.Sprintf("wave %d → %s", p.Wave, p.Target) })
	case events.ImagePrepulled:
		return decoded(e, prepulledDetail)
	case events.PodPatched:
		return decoded(e, patchedDetail)
	case events.PodUpdated:
		return decoded(e, func(d events.PodUpdatedData) string { return PodSummary(&d.Pod) })
	case events.ContainerRestarted:
		return decoded(e, restartedDetail)
	case events.UpgradeSucceeded, events.UpgradeFailed, events.UpgradeRolledBack:
		return decoded(e, OutcomeSummary)
	case events.RolloutCompleted, events.RolloutHalted:
		return decoded(e, func(d events.RolloutData) string { return rolloutDetail(e.Type(), d) })
	case events.RolloutResumed:
		return decoded(e, func(d events.ResumeData) string { return strings.TrimSpace("resumed " + d.Reason) })
	case events.RolloutAnalysisMeasured, events.RolloutAnalysisPassed, events.RolloutAnalysisFailed:
		return decoded(e, analysisDetail)
	case events.CDServiceUpgraded, events.CDServiceRolledBack:
		return "CDEvent for CD tools", nil
	}
	return "", nil
}

// decoded unmarshals e's data into T (without validating: a summary should
// show what is there) and summarises it.
func decoded[T any](e cloudevents.Event, f func(T) string) (string, error) {
	var v T
	if err := json.Unmarshal(e.Data(), &v); err != nil {
		return "", err
	}
	return f(v), nil
}

func requestedDetail(d events.UpgradeRequestData) string {
	s := d.Ref() + " (" + d.Origin + ")"
	if d.Target != nil {
		s += " for " + d.Target.String()
	}
	switch {
	case d.Undo != "":
		s += ", undoing " + d.Undo
	case d.AllowOlder:
		s += ", allowed to go back"
	}
	return s
}

func prepulledDetail(d events.PrepulledData) string {
	if d.Skipped != "" {
		return "skipped: " + d.Skipped
	}
	return fmt.Sprintf("pulled on %s in %s", d.Node, time.Duration(d.PullMillis)*time.Millisecond)
}

func patchedDetail(d events.PatchedData) string {
	parts := make([]string, 0, len(d.Plan.Containers))
	for _, c := range d.Plan.Containers {
		parts = append(parts, c.Name+" → "+c.ToImage)
	}
	return strings.Join(parts, ", ") + " (rv " + d.ResourceVersion + ")"
}

func restartedDetail(d events.ContainerRestartedData) string {
	s := fmt.Sprintf("%s restarted (restartCount %d)", d.Container, d.RestartCount)
	if d.Image != "" {
		s += " running " + d.Image
	}
	return s
}

// OutcomeSummary is "succeeded", or the outcome with its reason and message
// (which carries the kubelet's message when there is one).
func OutcomeSummary(d events.OutcomeData) string {
	s := d.Outcome
	if d.Reason != "" {
		s += " " + d.Reason
	}
	if d.Message != "" {
		s += ": " + d.Message
	}
	return s
}

func rolloutDetail(typ string, d events.RolloutData) string {
	c := d.Counts
	s := fmt.Sprintf("%s %d/%d succeeded", verb(typ), c.Succeeded+c.Skipped, c.Pods)
	if c.Failed > 0 {
		s += fmt.Sprintf(", %d failed", c.Failed)
	}
	if c.RolledBack > 0 {
		s += fmt.Sprintf(", %d rolled back", c.RolledBack)
	}
	if c.Deleted > 0 {
		s += fmt.Sprintf(", %d deleted in flight", c.Deleted)
	}
	if typ == events.RolloutCompleted {
		switch {
		case d.Template != nil && d.Template.Result == events.TemplateLeftToGitOps:
			s += ", template left to GitOps"
		case d.TemplateSynced:
			s += ", template synced"
		default:
			s += ", template not synced"
		}
	}
	if d.Reason != "" {
		s += "; " + d.Reason
	}
	if d.Message != "" {
		s += ": " + d.Message
	}
	return s
}

// verb is the last word of a short type: "completed" for rollout.completed.
func verb(typ string) string {
	s := events.Short(typ)
	return s[strings.LastIndex(s, ".")+1:]
}

// PodSummary is the phase of a pod and, per container, what the kubelet
// says: "Running; app running (restarts 1, ready)", or the waiting reason
// and message ("app waiting ImagePullBackOff: Back-off pulling image ...").
func PodSummary(p *corev1.Pod) string {
	parts := []string{string(p.Status.Phase)}
	if p.DeletionTimestamp != nil {
		parts[0] += " (deleting)"
	}
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			parts = append(parts, containerSummary(&list[i]))
		}
	}
	return strings.Join(parts, "; ")
}

func containerSummary(cs *corev1.ContainerStatus) string {
	s := cs.Name
	switch st := cs.State; {
	case st.Waiting != nil:
		s += " waiting " + st.Waiting.Reason
		if st.Waiting.Message != "" {
			s += ": " + st.Waiting.Message
		}
	case st.Terminated != nil:
		s += fmt.Sprintf(" terminated %s (exit %d)", st.Terminated.Reason, st.Terminated.ExitCode)
		if st.Terminated.Message != "" {
			s += ": " + st.Terminated.Message
		}
	case st.Running != nil:
		s += " running"
	default:
		s += " unknown"
	}
	ready := ""
	if cs.Ready {
		ready = ", ready"
	}
	return s + fmt.Sprintf(" (restarts %d%s)", cs.RestartCount, ready)
}
