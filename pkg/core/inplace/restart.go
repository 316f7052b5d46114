package inplace

import (
	"fmt"
	"strings"
	"time"
)

// Annotations a planned restart leaves on the pod, so restart alerts can
// tell it from a crash (written in the restart's own patch).
const (
	// RestartedAtAnnotation is when inplace last restarted containers of
	// the pod on purpose (RFC 3339).
	RestartedAtAnnotation = "inplace.dev/restarted-at"
	// RestartReasonAnnotation says which request restarted which
	// containers, and why.
	RestartReasonAnnotation = "inplace.dev/restart-reason"
)

// restartOps marks a restart on the pod; they follow the state's op, which
// creates the annotations map when the pod had none.
func restartOps(st State, now time.Time) []op {
	if st.Restart == nil || len(st.Containers) == 0 {
		return nil
	}
	names := make([]string, 0, len(st.Containers))
	for _, c := range st.Containers {
		names = append(names, c.Name)
	}
	why := fmt.Sprintf("restart %s of %s", st.UpgradeID, strings.Join(names, ","))
	if st.Restart.Reason != "" {
		why += ": " + st.Restart.Reason
	}
	base := "/metadata/annotations/"
	return []op{
		addOp(base+escape(RestartedAtAnnotation), now.UTC().Format(time.RFC3339)),
		addOp(base+escape(RestartReasonAnnotation), why),
	}
}
