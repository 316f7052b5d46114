package embednats

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func TestStartNeedsADataDir(t *testing.T) {
	_, err := Start(Options{Port: -1})
	if err == nil || !strings.Contains(err.Error(), "data dir") {
		t.Fatalf("Start without DataDir: %v, want an error naming the data dir", err)
	}
}

// The server listens on loopback by default, runs JetStream, and keeps
// its store in DataDir across a restart; after Shutdown it takes no
// connection.
func TestJetStreamSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Options{DataDir: dir, Port: -1})
	if !strings.HasPrefix(s.URL(), "nats://127.0.0.1:") {
		t.Errorf("URL %s, want loopback", s.URL())
	}
	publish(t, s)
	if _, err := os.Stat(filepath.Join(dir, "jetstream")); err != nil {
		t.Errorf("JetStream's store is not under DataDir: %v", err)
	}
	s.Shutdown()
	if _, err := nats.Connect(s.URL(), nats.Timeout(time.Second)); err == nil {
		t.Fatalf("connected to %s after Shutdown", s.URL())
	}

	again := start(t, Options{DataDir: dir, Port: -1})
	nc, err := again.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(t.Context(), "T")
	if err != nil {
		t.Fatalf("stream T after a restart on the same DataDir: %v", err)
	}
	if n := st.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("stream T holds %d messages after a restart, want 1", n)
	}
}

func publish(t *testing.T, s *Server) {
	t.Helper()
	nc, err := s.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatalf("create a stream: %v", err)
	}
	if _, err := js.Publish(t.Context(), "t.one", []byte("1")); err != nil {
		t.Fatalf("publish to the stream: %v", err)
	}
}

// With Users, a client without a known nkey is turned away and a known
// one may use only the subjects its permissions allow.
func TestUsersAuthenticateAndAreConfined(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	stranger, _ := nkeys.CreateUser()
	strangerPub, _ := stranger.PublicKey()
	s := start(t, Options{DataDir: t.TempDir(), Port: -1, Users: []User{{Nkey: pub, Publish: []string{"ok.>"}, Subscribe: []string{"ok.>"}}}})

	if nc, err := s.Connect("anonymous"); err == nil {
		nc.Close()
		t.Fatal("a client without credentials connected")
	}
	if nc, err := s.Connect("stranger", nats.Nkey(strangerPub, stranger.Sign)); err == nil {
		nc.Close()
		t.Fatal("a client with an unknown nkey connected")
	}

	denied := make(chan error, 4)
	nc, err := s.Connect("user", nats.Nkey(pub, kp.Sign), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err }))
	if err != nil {
		t.Fatalf("connect with a known nkey: %v", err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("ok.x")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("ok.x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("an allowed publish did not arrive: %v", err)
	}
	if err := nc.Publish("no.x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-denied:
		if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Errorf("publish to no.x: %v, want a permissions violation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a publish outside the user's subjects was not refused")
	}
}
