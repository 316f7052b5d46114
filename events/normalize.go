package events

import (
	"strings"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// Normalize returns e as one of the project's own types: foreign events
// accepted as input are adapted, the project's own are checked. An event it
// cannot accept is a permanent error naming what is wrong.
func Normalize(e cloudevents.Event) (cloudevents.Event, error) {
	switch {
	case e.Type() == APIServerSourceUpdate, e.Type() == APIServerSourceAdd:
		return FromAPIServerSource(e)
	case strings.HasPrefix(e.Type(), CDEventArtifactPublishedPrefix):
		return FromCDEvent(e)
	}
	return e, Check(e)
}

// Check validates e's CloudEvents attributes and, for the project's own
// types, its data.
func Check(e cloudevents.Event) error {
	if err := e.Validate(); err != nil {
		return permanent(e.Type(), fieldErr("attributes", err.Error()))
	}
	var err error
	switch e.Type() {
	case ImagePushed:
		_, err = As[ImagePushedData](e)
	case UpgradeRequested:
		_, err = As[UpgradeRequestData](e)
	case UpgradePlanned:
		_, err = As[Plan](e)
	case ImagePrepulled:
		_, err = As[PrepulledData](e)
	case PodPatched:
		_, err = As[PatchedData](e)
	case PodUpdated:
		_, err = As[PodUpdatedData](e)
	case ContainerRestarted:
		_, err = As[ContainerRestartedData](e)
	case UpgradeSucceeded, UpgradeFailed, UpgradeRolledBack:
		_, err = As[OutcomeData](e)
	case RolloutCompleted, RolloutHalted:
		_, err = As[RolloutData](e)
	case RolloutResumed:
		_, err = As[ResumeData](e)
	case UpgradeApprovalRequested, UpgradeApprovalExpired:
		_, err = As[ApprovalData](e)
	case UpgradeApproved, UpgradeRejected:
		_, err = As[DecisionData](e)
	case ContainerRestartRequested:
		_, err = As[RestartRequestData](e)
	case ContainerRestartSucceeded, ContainerRestartFailed:
		_, err = As[RestartResultData](e)
	case ContainerResizeRequested:
		_, err = As[ResizeRequestData](e)
	case ContainerResizeSucceeded, ContainerResizeFailed:
		_, err = As[ResizeResultData](e)
	case RolloutAnalysisMeasured, RolloutAnalysisPassed, RolloutAnalysisFailed:
		_, err = As[AnalysisData](e)
	default:
		return permanent(e.Type(), fieldErr("type", "not an event type inplace accepts"))
	}
	return err
}
