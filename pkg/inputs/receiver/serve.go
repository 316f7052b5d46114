package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// Delivery results, the metric's "result" label.
const (
	resultAccepted     = "accepted"
	resultIgnored      = "ignored"
	resultRejected     = "rejected"
	resultUnauthorized = "unauthorized"
	resultThrottled    = "throttled"
	resultBlocked      = "blocked"
	resultFailed       = "failed"
)

// ServeHTTP handles one delivery: route, method, content type, body,
// credentials, the client's failed authentications, the route's rate,
// parse, publish. Authentication comes first: an authenticated delivery is
// never charged to, nor refused by, the per-client limit of failed
// authentications, so a registry is not blocked by junk sent from its
// address (a NAT, an ingress); and it comes before the route's rate limit,
// so that forged deliveries cannot use up a genuine registry's share
// (GitHub and Docker Hub do not deliver again after a 429).
func (h *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, token, ok := h.lookup(r.URL.Path)
	if !ok {
		h.metrics.count("", resultRejected)
		writeJSON(w, http.StatusNotFound, errorBody("unknown route"))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.finish(w, r, rt, http.StatusMethodNotAllowed, resultRejected, errorBody("only POST"))
		return
	}
	if ct := r.Header.Get("Content-Type"); !registry.AcceptsContentType(rt.format, ct) {
		h.finish(w, r, rt, http.StatusUnsupportedMediaType, resultRejected,
			errorBody(fmt.Sprintf("content type %q is not one of %s", ct, strings.Join(registry.ContentTypes(rt.format), ", "))))
		return
	}
	body, status, err := h.readBody(w, r, rt.limit)
	if err != nil {
		h.finish(w, r, rt, status, resultRejected, errorBody(err.Error()))
		return
	}
	if err := rt.auth.check(r, token, body); err != nil {
		h.denied(w, r, rt, h.clients.client(r), err)
		return
	}
	if wait, ok := rt.allow(); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		h.finish(w, r, rt, http.StatusTooManyRequests, resultThrottled, errorBody("rate limit exceeded"))
		return
	}
	h.deliver(w, r, rt, body)
}

// allow takes a token of the route's bucket, or says how many seconds to wait.
func (rt *route) allow() (int, bool) {
	res := rt.limiter.Reserve()
	if !res.OK() {
		return 1, false
	}
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return int(math.Ceil(d.Seconds())), false
	}
	return 0, true
}

// readBody reads at most limit bytes within the read timeout.
func (h *Receiver) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(h.readTimeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		// The rest of the body is not worth waiting for: the deadline stays,
		// and the connection is not reused.
		w.Header().Set("Connection", "close")
	} else if deadline {
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, errors.New("body larger than " + strconv.FormatInt(limit, 10) + " bytes")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout, errors.New("body not received within " + h.readTimeout.String())
	case err != nil:
		return nil, http.StatusBadRequest, errors.New("cannot read body")
	}
	return body, 0, nil
}

// denied answers a delivery whose credentials did not pass: 401, or 429
// once its client failed too often (charged either way, so a client that
// keeps failing stays held off), or 503 when they could not be checked.
func (h *Receiver) denied(w http.ResponseWriter, r *http.Request, rt *route, client netip.Addr, err error) {
	var ua *unauthorized
	if !errors.As(err, &ua) {
		h.log.ErrorContext(r.Context(), "webhook credentials not checked", "route", rt.name, "error", err)
		h.finish(w, r, rt, http.StatusServiceUnavailable, resultFailed, errorBody("cannot verify credentials now"))
		return
	}
	wait, blocked := h.clients.blocked(client)
	h.clients.failed(client)
	if blocked {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		h.finish(w, r, rt, http.StatusTooManyRequests, resultBlocked, errorBody("too many failed authentications"))
		return
	}
	h.log.WarnContext(r.Context(), "webhook delivery refused", "route", rt.name, "error", err)
	h.finish(w, r, rt, http.StatusUnauthorized, resultUnauthorized, errorBody(ua.Msg))
}

// deliver parses the body and publishes its pushes.
func (h *Receiver) deliver(w http.ResponseWriter, r *http.Request, rt *route, body []byte) {
	res, err := registry.Parse(rt.format, registry.Delivery{Header: r.Header, Body: body, Registry: rt.registry})
	if err != nil {
		h.finish(w, r, rt, http.StatusBadRequest, resultRejected, errorBody(err.Error()))
		return
	}
	if len(res.Pushes) == 0 {
		h.finish(w, r, rt, http.StatusOK, resultIgnored, map[string]string{"ignored": res.Ignored})
		return
	}
	if len(res.Pushes) > rt.maxImages {
		h.finish(w, r, rt, http.StatusRequestEntityTooLarge, resultRejected, errorBody(fmt.Sprintf(
			"the delivery names %d images; this route takes at most %d per delivery (maxImages)", len(res.Pushes), rt.maxImages)))
		return
	}
	pushes, stale := fresh(res.Pushes, h.now(), h.maxAge)
	if len(pushes) == 0 {
		// 200: a registry retrying a stale delivery would only block its queue.
		h.finish(w, r, rt, http.StatusOK, resultStale, map[string]any{"refused": stale})
		return
	}
	published, err := h.publish(r.Context(), pushes)
	if err != nil {
		h.log.ErrorContext(r.Context(), "publish image.pushed", "route", rt.name, "error", err)
		h.finish(w, r, rt, http.StatusServiceUnavailable, resultFailed, errorBody("cannot publish the event now; deliver again"))
		return
	}
	h.metrics.published.WithLabelValues(rt.name).Add(float64(len(published)))
	answer := map[string]any{"events": published}
	if len(stale) > 0 {
		answer["refused"] = stale
	}
	h.finish(w, r, rt, http.StatusAccepted, resultAccepted, answer)
}

// publishedEvent is one entry of a 202 body.
type publishedEvent struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
}

func (h *Receiver) publish(ctx context.Context, pushes []events.ImagePushedData) ([]publishedEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	out := make([]publishedEvent, 0, len(pushes))
	for _, d := range pushes {
		e, err := events.New(events.PushID(d), events.ImagePushed, events.Source("receiver"), d.Ref(), d)
		if err != nil {
			return nil, err
		}
		if err := h.pub.Publish(ctx, e); err != nil {
			return nil, err
		}
		out = append(out, publishedEvent{ID: e.ID(), Subject: e.Subject()})
	}
	return out, nil
}

// finish writes the answer, counts it and logs it once.
func (h *Receiver) finish(w http.ResponseWriter, r *http.Request, rt *route, status int, result string, body any) {
	h.metrics.count(rt.name, result)
	h.log.LogAttrs(r.Context(), level(status, result), "webhook delivery",
		slog.String("route", rt.name), slog.String("format", string(rt.format)),
		slog.Int("status", status), slog.String("result", result), slog.Any("response", body))
	writeJSON(w, status, body)
}

// level: ignored deliveries (a busy registry's pulls) are debug noise.
func level(status int, result string) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400, result == resultStale:
		return slog.LevelWarn
	case result == resultIgnored:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

func errorBody(msg string) map[string]string { return map[string]string{"error": msg} }

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
