package function

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Statuses of the retry contract (DESIGN.md "Transports a function sits behind").
const (
	StatusPermanent = http.StatusUnprocessableEntity // never retried: dead-lettered
	StatusRetry     = http.StatusServiceUnavailable  // retried with backoff
)

// answer turns a handler's error into the HTTP result of the request: 422
// for a permanent error, 503 for anything retryable, and 503 with the
// delay for "not yet". It logs once, here, with the event id.
func (f *Function) answer(e cloudevents.Event, err error) error {
	kind, delay := settle.Classify(err)
	log := f.log.With("event", e.ID(), "type", e.Type(), "outcome", kind.String())
	switch kind {
	case settle.Fail:
		log.Error("permanent failure; the Broker dead-letters the event", "err", err)
		return cehttp.NewResult(StatusPermanent, "%s", err)
	case settle.Later:
		log.Debug("not yet", "reason", err, "in", delay)
		f.noteLater(e.ID(), delay)
	default:
		log.Warn("failed, will be retried", "err", err)
	}
	return cehttp.NewResult(StatusRetry, "%s", err)
}

// laterSlot carries a "not yet" delay from the handler to RetryAfter.
type laterSlot struct{ delay atomic.Int64 }

func (f *Function) noteLater(id string, d time.Duration) {
	if v, ok := f.later.Load(id); ok {
		v.(*laterSlot).delay.Store(int64(d))
	}
}

// RetryAfter wraps the func-go service's handler so that a 503 for "not
// yet" carries a Retry-After header with the handler's delay. func-go's
// CloudEvents handler can only choose the status and body, so the delay
// travels by event id from Handle to this wrapper. Structured-mode bodies
// are read up to 8 MiB to find the id.
func (f *Function) RetryAfter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := eventID(r)
		if id == "" {
			next.ServeHTTP(w, r)
			return
		}
		slot := &laterSlot{}
		if _, busy := f.later.LoadOrStore(id, slot); busy {
			next.ServeHTTP(w, r) // the same id twice at once: the first answers with the delay
			return
		}
		defer f.later.CompareAndDelete(id, slot)
		next.ServeHTTP(&retryAfterWriter{ResponseWriter: w, slot: slot}, r)
	})
}

// eventID is the id of the CloudEvent in r: the ce-id header in binary
// mode, the "id" member of a structured-mode body. The body is put back.
func eventID(r *http.Request) string {
	if id := r.Header.Get("Ce-Id"); id != "" {
		return id
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != cloudevents.ApplicationCloudEventsJSON || r.Body == nil {
		return ""
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil {
		return ""
	}
	var probe struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &probe)
	return probe.ID
}

type retryAfterWriter struct {
	http.ResponseWriter
	slot *laterSlot
}

func (w *retryAfterWriter) WriteHeader(code int) {
	if d := time.Duration(w.slot.delay.Load()); code == StatusRetry && d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *retryAfterWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
