package registry

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/test/eventually"
)

// post is one notification POST as the receiver saw it.
type post struct {
	header http.Header
	body   []byte
	events []event
}

// event holds the fields of a Distribution event the tests look at.
type event struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Action    string `json:"action"`
	Target    struct {
		MediaType  string `json:"mediaType"`
		Digest     string `json:"digest"`
		Size       int64  `json:"size"`
		Repository string `json:"repository"`
		URL        string `json:"url"`
		Tag        string `json:"tag"`
		References []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"references"`
	} `json:"target"`
	Request struct {
		ID     string `json:"id"`
		Host   string `json:"host"`
		Method string `json:"method"`
	} `json:"request"`
}

// recorder is a notification receiver on 127.0.0.1 that keeps every POST.
// fail, if set, decides per POST (under mu) whether to answer 503, not 200.
type recorder struct {
	t      *testing.T
	server *httptest.Server
	fail   func(post) bool

	mu    sync.Mutex
	posts []post
}

func newRecorder(t *testing.T, fail func(post) bool) *recorder {
	t.Helper()
	rec := &recorder{t: t, fail: fail}
	rec.server = httptest.NewServer(http.HandlerFunc(rec.serveHTTP))
	t.Cleanup(rec.server.Close)
	return rec
}

func (rec *recorder) URL() string { return rec.server.URL }

func (rec *recorder) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var env struct{ Events []event }
	if err := json.Unmarshal(body, &env); err != nil {
		rec.t.Errorf("notification body is not an envelope: %v\n%s", err, body)
	}
	p := post{header: r.Header.Clone(), body: body, events: env.Events}
	rec.mu.Lock()
	rec.posts = append(rec.posts, p)
	refuse := rec.fail != nil && rec.fail(p)
	rec.mu.Unlock()
	if refuse {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// all returns the POSTs received so far.
func (rec *recorder) all() []post {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]post(nil), rec.posts...)
}

// waitFor waits until done holds for the POSTs received so far and returns
// them; it fails the test after a generous timeout.
func (rec *recorder) waitFor(done func([]post) bool) []post {
	rec.t.Helper()
	var posts []post
	err := eventually.Poll(rec.t.Context(), 60*time.Second, "the notifications", func(context.Context) (bool, error) {
		posts = rec.all()
		return done(posts), nil
	})
	if err != nil {
		rec.t.Fatalf("%v; got %d posts: %s", err, len(posts), summary(posts))
	}
	return posts
}

// find returns the first event matching match, and whether there is one.
func find(posts []post, match func(event) bool) (post, event, bool) {
	for _, p := range posts {
		for _, e := range p.events {
			if match(e) {
				return p, e, true
			}
		}
	}
	return post{}, event{}, false
}

// count returns how many events match.
func count(posts []post, match func(event) bool) int {
	n := 0
	for _, p := range posts {
		for _, e := range p.events {
			if match(e) {
				n++
			}
		}
	}
	return n
}

func summary(posts []post) string {
	s := ""
	for _, p := range posts {
		for _, e := range p.events {
			s += "\n  " + e.Action + " " + e.Target.MediaType + " " + e.Target.Repository + " tag=" + e.Target.Tag + " " + e.Target.Digest
		}
	}
	return s
}

// testLogger logs through t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}
