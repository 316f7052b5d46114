package events

// DeriveUpgradeID names the rollout of one push (its event id) on one
// workload: every replica and every redelivery derives the same id.
func DeriveUpgradeID(pushID string, w ObjectRef) string {
	return "u-" + DeriveID(pushID, "upgrade", w.String())[:12]
}

// DeriveResizeID names a resize request on one workload.
func DeriveResizeID(requestID string, w ObjectRef) string {
	return "z-" + DeriveID(requestID, "resize", w.String())[:12]
}

// DeriveRestartID names a restart request on one workload.
func DeriveRestartID(requestID string, w ObjectRef) string {
	return "r-" + DeriveID(requestID, "restart", w.String())[:12]
}
