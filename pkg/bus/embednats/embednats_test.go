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
// one may use only the subjects its permissions allow, alike in process
// (Connect) and over TCP (another process).
func TestUsersAuthenticateAndAreConfined(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	stranger, _ := nkeys.CreateUser()
	strangerPub, _ := stranger.PublicKey()
	s := start(t, Options{DataDir: t.TempDir(), Port: -1, Users: []User{{Nkey: pub, Publish: []string{"ok.>"}, Subscribe: []string{"ok.>"}}}})
	for _, tc := range []struct {
		name string
		dial func(name string, opts ...nats.Option) (*nats.Conn, error)
		addr string // the connection's remote address: "pipe" in process
	}{
		{"in-process", s.Connect, "pipe"},
		{"tcp", func(name string, opts ...nats.Option) (*nats.Conn, error) {
			return nats.Connect(s.URL(), append(opts, nats.Name(name))...)
		}, strings.TrimPrefix(s.URL(), "nats://")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if nc, err := tc.dial("anonymous"); !errors.Is(err, nats.ErrAuthorization) {
				t.Fatalf("a client without credentials: %v, want %v", err, nats.ErrAuthorization)
			} else if nc != nil {
				nc.Close()
			}
			if nc, err := tc.dial("stranger", nats.Nkey(strangerPub, stranger.Sign)); !errors.Is(err, nats.ErrAuthorization) {
				t.Fatalf("a client with an unknown nkey: %v, want %v", err, nats.ErrAuthorization)
			} else if nc != nil {
				nc.Close()
			}
			denied := make(chan error, 4)
			nc, err := tc.dial("user", nats.Nkey(pub, kp.Sign), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err }))
			if err != nil {
				t.Fatalf("connect with a known nkey: %v", err)
			}
			defer nc.Close()
			if got := nc.ConnectedAddr(); got != tc.addr {
				t.Fatalf("connected to %s, want %s", got, tc.addr)
			}
			confinedTo(t, nc, denied)
		})
	}
}

// confinedTo checks that nc may use ok.> and is refused no.x.
func confinedTo(t *testing.T, nc *nats.Conn, denied chan error) {
	t.Helper()
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

// What an in-process connection publishes right before Close reaches the
// server, as it does over TCP.
func TestCloseDeliversWhatWasPublished(t *testing.T) {
	s := start(t, Options{DataDir: t.TempDir(), Port: -1})
	sub, err := s.Connect("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got, err := sub.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	pub, err := s.Connect("pub")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := pub.Publish("x", []byte(strings.Repeat("m", i))); err != nil {
			t.Fatal(err)
		}
	}
	pub.Close()
	for i := range n {
		if _, err := got.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("message %d of %d published before Close: %v", i+1, n, err)
		}
	}
}

// An in-process connection the server drops reconnects in process; once
// the server is shut down it keeps trying, as a TCP one does against a
// closed port, and closes at once.
func TestAnInProcessConnectionReconnects(t *testing.T) {
	s := start(t, Options{DataDir: t.TempDir(), Port: -1})
	reconnected, disconnected := make(chan struct{}, 4), make(chan struct{}, 4)
	nc, err := s.Connect("c", nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { disconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	id, err := nc.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ns.DisconnectClientByID(id); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []chan struct{}{disconnected, reconnected} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("the dropped connection did not disconnect and reconnect")
		}
	}
	if nc.ConnectedAddr() != "pipe" {
		t.Errorf("reconnected at %s, want in process", nc.ConnectedAddr())
	}
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Errorf("a request after the reconnect: %v", err)
	}

	s.Shutdown()
	select {
	case <-disconnected:
	case <-time.After(5 * time.Second):
		t.Fatal("no disconnect after Shutdown")
	}
	if st := nc.Status(); st != nats.RECONNECTING {
		t.Errorf("status %v after Shutdown, want %v", st, nats.RECONNECTING)
	}
	start := time.Now()
	nc.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
}
