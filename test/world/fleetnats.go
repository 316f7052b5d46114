package world

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// joinTimeout bounds a wait for leaf connections.
const joinTimeout = 30 * time.Second

// StartHub starts the hub's NATS (again, after StopHub: on the same store
// and leaf port), waits for the members whose link is not cut to join and
// resyncs their sources (fleetnet.Resync).
func (f *Fleet) StartHub(ctx context.Context) error {
	keys, err := busauth.Ensure(f.HubCredentials)
	if err != nil {
		return err
	}
	users := busauth.EmbeddedUsers(f.bus, keys)
	for _, m := range f.Members {
		users = append(users, fleetnet.MemberUser(m.Name, m.LeafKey))
	}
	hub, err := embednats.Start(embednats.Options{DataDir: filepath.Join(f.dir, "hub", "nats"), Port: -1, Name: "hub",
		Domain: fleetnet.HubDomain, Users: users, Hub: &embednats.Hub{Port: f.leafPort}})
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	f.Hub = hub
	u, err := url.Parse(hub.LeafURL())
	if err != nil {
		return fmt.Errorf("hub: leaf URL %q: %w", hub.LeafURL(), err)
	}
	if _, err := fmt.Sscan(u.Port(), &f.leafPort); err != nil {
		return fmt.Errorf("hub: leaf URL %q: %w", hub.LeafURL(), err)
	}
	return f.rejoin(ctx)
}

// StopHub stops the hub's NATS; members keep running on their own.
func (f *Fleet) StopHub() {
	if f.Hub != nil {
		f.Hub.Shutdown()
		f.Hub = nil
	}
}

// Cut drops member name's leaf connection and keeps it down (both NATS
// servers keep running) until Heal.
func (f *Fleet) Cut(ctx context.Context, name string) error {
	m := f.Member(name)
	if m == nil {
		return fmt.Errorf("cut: no member %q", name)
	}
	m.link.SetCut(true)
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	return m.NATS.WaitLeafs(ctx, 0)
}

// Heal lets member name join the hub again and waits until it has,
// resyncing its source on the hub.
func (f *Fleet) Heal(ctx context.Context, name string) error {
	m := f.Member(name)
	if m == nil {
		return fmt.Errorf("heal: no member %q", name)
	}
	m.link.SetCut(false)
	return f.rejoin(ctx)
}

// rejoin waits for every started member whose link is up to be joined to
// the hub, then restarts the stale sources of the hub's stream and of
// each joined member's InStream.
func (f *Fleet) rejoin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	joined := 0
	for _, m := range f.Members {
		if m.NATS == nil || m.link.IsCut() {
			continue
		}
		if err := m.NATS.WaitLeafs(ctx, 1); err != nil {
			return fmt.Errorf("member %s joining the hub: %w", m.Name, err)
		}
		joined++
	}
	if err := f.Hub.WaitLeafs(ctx, joined); err != nil {
		return err
	}
	if joined == 0 {
		return nil
	}
	for _, m := range f.Members {
		if m.NATS != nil && !m.link.IsCut() {
			if err := m.resync(ctx); err != nil {
				return fmt.Errorf("member %s: %w", m.Name, err)
			}
		}
	}
	return f.withHub(ctx, func(js jetstream.JetStream) error {
		if _, err := js.Stream(ctx, fleetnet.HubStream); err != nil {
			return nil // not set up yet
		}
		_, err := fleetnet.Resync(ctx, js, f.Hub.LeafNames())
		return err
	})
}

// resync restarts the member's stale InStream sources, once it has one.
func (m *Member) resync(ctx context.Context) error {
	nc, err := m.Conn(busauth.Operator)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if _, err := js.Stream(ctx, fleetnet.InStream); err != nil {
		return nil // not set up yet
	}
	_, err = fleetnet.ResyncMember(ctx, js)
	return err
}

// startMemberNATS starts m's server, a leaf of the hub through its link.
func (f *Fleet) startMemberNATS(ctx context.Context, m *Member) error {
	u, _ := url.Parse(f.Hub.LeafURL())
	link, err := NewLeafProxy(u.Host)
	if err != nil {
		return err
	}
	m.link = link
	keys, err := busauth.Ensure(m.Credentials)
	if err != nil {
		return err
	}
	seed, err := os.ReadFile(m.LeafSeed)
	if err != nil {
		return err
	}
	s, err := embednats.Start(embednats.Options{DataDir: filepath.Join(m.dir, "nats"), Port: -1, Name: m.Name,
		Domain: m.Name, Users: busauth.EmbeddedUsers(f.bus, keys), Leaf: &embednats.Leaf{URL: link.URL(), Seed: string(seed)}})
	if err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	m.NATS = s
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	return s.WaitLeafs(ctx, 1)
}

// setupStreams makes each member's bus and fleet streams and the hub's.
func (f *Fleet) setupStreams(ctx context.Context) error {
	var names []string
	for _, m := range f.Members {
		nc, err := m.Conn(busauth.Operator)
		if err != nil {
			return err
		}
		_, err = bus.Connect(ctx, nc, f.bus, f.log)
		if err == nil {
			err = setupMember(ctx, nc, fleetnet.Member{Cluster: m.Name, Forward: &f.bus})
		}
		nc.Close()
		if err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
		names = append(names, m.Name)
	}
	return f.withHub(ctx, func(js jetstream.JetStream) error {
		_, err := fleetnet.SetupHub(ctx, js, names)
		return err
	})
}

func setupMember(ctx context.Context, nc *nats.Conn, m fleetnet.Member) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return fleetnet.SetupMember(ctx, js, m)
}

// withHub runs fn with a JetStream client of the hub, as its operator.
func (f *Fleet) withHub(ctx context.Context, fn func(jetstream.JetStream) error) error {
	nc, err := f.HubConn(busauth.Operator)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	return fn(js)
}
