package fleetnet_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/test/world"
)

// fleet is a hub and its members on real embedded servers, on loopback.
type fleet struct {
	t        *testing.T
	hubDir   string
	leafPort int
	hub      *embednats.Server
	op       nkeys.KeyPair // the hub's all-powerful local identity
	seeds    map[string]string
	members  map[string]*embednats.Server
	links    map[string]*world.LeafProxy
	perms    func(cluster string) fleetnet.Perms
}

func newFleet(t *testing.T, perms func(string) fleetnet.Perms, clusters ...string) *fleet {
	t.Helper()
	op, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, hubDir: t.TempDir(), leafPort: -1, op: op, seeds: map[string]string{},
		members: map[string]*embednats.Server{}, links: map[string]*world.LeafProxy{}, perms: perms}
	for _, c := range clusters {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		f.seeds[c] = string(seed)
	}
	f.startHub()
	for _, c := range clusters {
		l, err := world.NewLeafProxy(strings.TrimPrefix(f.hub.LeafURL(), "nats-leaf://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
		f.links[c] = l
		m, err := embednats.Start(embednats.Options{DataDir: t.TempDir(), Port: -1, Name: c, Domain: c,
			Leaf: &embednats.Leaf{URL: l.URL(), Seed: f.seeds[c]}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Shutdown)
		f.members[c] = m
	}
	f.waitJoined()
	return f
}

// startHub starts the hub (again, on the same store and leaf port).
func (f *fleet) startHub() {
	f.t.Helper()
	opPub, _ := f.op.PublicKey()
	users := []embednats.User{{Nkey: opPub, Publish: []string{">"}, Subscribe: []string{">"}}}
	for c, seed := range f.seeds {
		kp, _ := nkeys.FromSeed([]byte(seed))
		pub, _ := kp.PublicKey()
		p := f.perms(c)
		users = append(users, embednats.User{Nkey: pub, Publish: p.Publish, Subscribe: p.Subscribe})
	}
	hub, err := embednats.Start(embednats.Options{DataDir: f.hubDir, Port: -1, Name: "hub", Domain: fleetnet.HubDomain,
		Users: users, Hub: &embednats.Hub{Port: f.leafPort}})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(hub.Shutdown)
	f.hub = hub
	if f.leafPort == -1 {
		var port int
		if _, err := fmtSscanPort(hub.LeafURL(), &port); err != nil {
			f.t.Fatal(err)
		}
		f.leafPort = port
	}
}

func (f *fleet) waitJoined() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), 20*time.Second)
	defer cancel()
	joined := 0
	for c, m := range f.members {
		want := 1
		if f.links[c].IsCut() {
			want = 0
		}
		if err := m.WaitLeafs(ctx, want); err != nil {
			f.t.Fatal(err)
		}
		joined += want
	}
	if err := f.hub.WaitLeafs(ctx, joined); err != nil {
		f.t.Fatal(err)
	}
}

// cut drops member c's leaf connection and keeps it down until heal.
func (f *fleet) cut(c string) {
	f.t.Helper()
	f.links[c].SetCut(true)
	f.waitJoined()
}

// heal lets member c join the hub again and waits until it has.
func (f *fleet) heal(c string) {
	f.t.Helper()
	f.links[c].SetCut(false)
	f.waitJoined()
}

// hubConn connects to the hub as its operator.
func (f *fleet) hubConn() *nats.Conn {
	f.t.Helper()
	pub, _ := f.op.PublicKey()
	nc, err := f.hub.Connect("hub-operator", nats.Nkey(pub, f.op.Sign))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(nc.Close)
	return nc
}

// memberConn connects to a member's own server (which takes any client:
// whatever it does, the hub confines its leaf connection).
func (f *fleet) memberConn(c string) *nats.Conn {
	f.t.Helper()
	nc, err := f.members[c].Connect(c + "-client")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(nc.Close)
	return nc
}

func js(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	j, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func fmtSscanPort(url string, port *int) (int, error) {
	return fmt.Sscanf(url[strings.LastIndex(url, ":")+1:], "%d", port)
}

// subscribe gathers what nc receives on subjects, once the server has the
// subscriptions.
func subscribe(t *testing.T, nc *nats.Conn, subjects ...string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 1024)
	for _, s := range subjects {
		if _, err := nc.ChanSubscribe(s, ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func publish(t *testing.T, nc *nats.Conn, subject, data string) {
	t.Helper()
	if err := nc.Publish(subject, []byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// until sends until ch receives something: interest crosses a leaf
// connection a moment after the subscription.
func until(t *testing.T, what string, ch <-chan *nats.Msg, send func()) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		send()
		select {
		case <-ch:
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("waiting for %s: nothing arrived", what)
		}
	}
}

// drain yields what ch receives before a message whose data is last,
// leaving out the probes until sent.
func drain(t *testing.T, ch <-chan *nats.Msg, last string) iter.Seq[*nats.Msg] {
	return func(yield func(*nats.Msg) bool) {
		for {
			select {
			case m := <-ch:
				if string(m.Data) == last {
					return
				}
				if string(m.Data) != "probe" && !yield(m) {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%q did not arrive", last)
			}
		}
	}
}

// eventually waits up to 15s for cond, looking every 50ms: less than the
// 40s nats-server takes to retry a source set up while its member was away,
// so a test of Resync fails without it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		<-tick.C
	}
}
