package events

import (
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// Normalize returns e as one of the project's own types: foreign events
// accepted as input are adapted, the project's own are checked. An event it
// cannot accept is a permanent error naming what is wrong.
func Normalize(e cloudevents.Event) (cloudevents.Event, error) {
	e, _, err := NormalizeChecked(e)
	return e, err
}

// NormalizeChecked is Normalize that also returns the data it decoded to
// check one of the project's own types (nil for an adapted foreign event),
// for a transport to hand to the handler (WithChecked) rather than have
// it decoded a second time.
func NormalizeChecked(e cloudevents.Event) (cloudevents.Event, any, error) {
	switch {
	case e.Type() == APIServerSourceUpdate, e.Type() == APIServerSourceAdd:
		e, err := FromAPIServerSource(e)
		return e, nil, err
	case strings.HasPrefix(e.Type(), CDEventArtifactPublishedPrefix):
		e, err := FromCDEvent(e)
		return e, nil, err
	}
	v, err := check(e)
	return e, v, err
}

// Check validates e's CloudEvents attributes and, for the project's own
// types, its data.
func Check(e cloudevents.Event) error {
	_, err := check(e)
	return err
}

// check is Check returning the data it decoded.
func check(e cloudevents.Event) (v any, err error) {
	if err := e.Validate(); err != nil {
		return nil, permanent(e.Type(), fieldErr("attributes", err.Error()))
	}
	switch e.Type() {
	case ImagePushed:
		v, err = asAny[ImagePushedData](e)
	case UpgradeRequested:
		v, err = asAny[UpgradeRequestData](e)
	case UpgradePlanned:
		v, err = asAny[Plan](e)
	case ImagePrepulled:
		v, err = asAny[PrepulledData](e)
	case PodPatched:
		v, err = asAny[PatchedData](e)
	case PodUpdated:
		v, err = asAny[PodUpdatedData](e)
	case ContainerRestarted:
		v, err = asAny[ContainerRestartedData](e)
	case UpgradeSucceeded, UpgradeFailed, UpgradeRolledBack:
		v, err = asAny[OutcomeData](e)
	case RolloutCompleted, RolloutHalted:
		v, err = asAny[RolloutData](e)
	case RolloutResumed:
		v, err = asAny[ResumeData](e)
	case UpgradeApprovalRequested, UpgradeApprovalExpired:
		v, err = asAny[ApprovalData](e)
	case UpgradeApproved, UpgradeRejected:
		v, err = asAny[DecisionData](e)
	case ContainerRestartRequested:
		v, err = asAny[RestartRequestData](e)
	case ContainerRestartSucceeded, ContainerRestartFailed:
		v, err = asAny[RestartResultData](e)
	case ContainerResizeRequested:
		v, err = asAny[ResizeRequestData](e)
	case ContainerResizeSucceeded, ContainerResizeFailed:
		v, err = asAny[ResizeResultData](e)
	case RolloutAnalysisMeasured, RolloutAnalysisPassed, RolloutAnalysisFailed:
		v, err = asAny[AnalysisData](e)
	default:
		return nil, permanent(e.Type(), fieldErr("type", "not an event type inplace accepts"))
	}
	return v, err
}

func asAny[T Validator](e cloudevents.Event) (any, error) { return As[T](e) }
