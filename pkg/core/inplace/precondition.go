package inplace

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PreconditionFailed reports whether err is the API server refusing one of
// this package's JSON patches because a "test" op failed: the object changed
// since it was read (another resourceVersion, image or state). The API server
// (k8s.io/apiserver patch.go, 1.35) answers that with a bare 422, reason
// Invalid, message "the server rejected our request due to an error in our
// request", no kind, name or causes; a validation error is also 422/Invalid
// but names the object and its causes. So IsInvalid alone must not be read
// as permanent: on PreconditionFailed, re-read the object and call the
// builder again, which then returns a fresh patch, ErrAlreadyApplied, ErrBusy
// or a permanent error.
func PreconditionFailed(err error) bool {
	var se apierrors.APIStatus
	if err == nil || !errors.As(err, &se) {
		return false
	}
	st := se.Status()
	if st.Code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid {
		return false
	}
	d := st.Details
	return d == nil || (d.Kind == "" && d.Name == "" && len(d.Causes) == 0)
}
