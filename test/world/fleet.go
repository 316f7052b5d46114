package world

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/test/registry"
)

// FleetOptions configure a fleet of worlds.
type FleetOptions struct {
	// Clusters names the members, each a world of its own (its own etcd,
	// kube-apiserver, controller-manager and nodes) whose NATS is a leaf
	// node of the hub; default staging, prod-eu, prod-us.
	Clusters []string
	// World is each member's world (its Cluster and Registry are the
	// fleet's to set); its Logger is the fleet's default.
	World Options
	// Bus is the members' bus (its stream is what fleetnet forwards from);
	// default bus.DefaultConfig().
	Bus *bus.Config
}

// Fleet is a hub and its member worlds. The hub is a NATS server
// (JetStream domain fleetnet.HubDomain, leaf nodes on loopback) whose
// FLEET stream sources every member's outcomes; every member pulls from
// one registry, so a push is one push for the fleet.
type Fleet struct {
	// Hub is the hub's NATS server; HubCredentials the directory of its
	// identities (busauth roles, busauth.Operator for everything).
	Hub            *embednats.Server
	HubCredentials string
	// Registry is the registry of every member.
	Registry *registry.Registry
	// Members in the order of FleetOptions.Clusters.
	Members []*Member

	dir      string
	bus      bus.Config
	leafPort int
	log      *slog.Logger
}

// Member is one cluster of a fleet.
type Member struct {
	// Name is the cluster's name, its JetStream domain and its NATS
	// server's name.
	Name string
	// World is the member's cluster, nodes and (shared) registry.
	World *World
	// NATS is the member's server, a leaf node of the hub through a link
	// the fleet can cut (Fleet.Cut); Credentials the directory of its
	// identities (busauth roles), for `inplace run --nats-url
	// NATS.URL() --nats-credentials Credentials`.
	NATS        *embednats.Server
	Credentials string
	// LeafSeed is the member's leaf identity's nkey seed file; LeafKey its
	// public key, a fleetnet.MemberUser on the hub.
	LeafSeed, LeafKey string

	dir  string
	link *LeafProxy
}

// StartFleet starts the registry, the hub, each member's NATS joined to
// the hub and its world, and the fleet's streams (fleetnet.SetupMember
// with Forward, fleetnet.SetupHub). Stop it with Stop.
func StartFleet(ctx context.Context, opts FleetOptions) (*Fleet, error) {
	f, err := newFleet(opts)
	if err != nil {
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	if err := f.start(ctx, opts); err != nil {
		f.Stop()
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	return f, nil
}

func newFleet(opts FleetOptions) (*Fleet, error) {
	if len(opts.Clusters) == 0 {
		opts.Clusters = []string{"staging", "prod-eu", "prod-us"}
	}
	f := &Fleet{bus: bus.DefaultConfig(), leafPort: -1, log: opts.World.Logger}
	if opts.Bus != nil {
		f.bus = *opts.Bus
	}
	if f.log == nil {
		f.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, c := range opts.Clusters {
		if err := fleetnet.ValidCluster(c); err != nil {
			return nil, fmt.Errorf("FleetOptions.Clusters: %w", err)
		}
		if slices.ContainsFunc(f.Members, func(m *Member) bool { return m.Name == c }) {
			return nil, fmt.Errorf("FleetOptions.Clusters: %q twice", c)
		}
		f.Members = append(f.Members, &Member{Name: c})
	}
	dir, err := os.MkdirTemp("", "inplace-fleet-")
	if err != nil {
		return nil, err
	}
	f.dir = dir
	return f, nil
}

func (f *Fleet) start(ctx context.Context, opts FleetOptions) error {
	ro := opts.World.RegistryOptions
	if ro.Logger == nil {
		ro.Logger = f.log
	}
	reg, err := registry.Start(ctx, ro)
	if err != nil {
		return err
	}
	f.Registry = reg
	if err := f.identities(); err != nil {
		return err
	}
	if err := f.StartHub(ctx); err != nil {
		return err
	}
	for _, m := range f.Members {
		if err := f.startMemberNATS(ctx, m); err != nil {
			return err
		}
	}
	if err := f.setupStreams(ctx); err != nil {
		return err
	}
	for _, m := range f.Members {
		t := time.Now()
		wo := opts.World
		wo.Cluster, wo.Registry, wo.Logger = nil, f.Registry, f.log
		w, err := Start(ctx, wo)
		if err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
		m.World = w
		f.log.Info("fleet member ready", "cluster", m.Name, "took", time.Since(t))
	}
	return nil
}

// Member is the member named name, or nil.
func (f *Fleet) Member(name string) *Member {
	for _, m := range f.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Stop tears the fleet down: the worlds, the members' NATS, the hub, the
// registry, and the fleet's directory. Safe on a partly started fleet.
func (f *Fleet) Stop() error {
	var errs []error
	for _, m := range f.Members {
		if m.World != nil {
			errs = append(errs, m.World.Stop())
		}
		if m.NATS != nil {
			m.NATS.Shutdown()
		}
		if m.link != nil {
			m.link.Close()
		}
	}
	f.StopHub()
	if f.Registry != nil {
		errs = append(errs, f.Registry.Close())
	}
	errs = append(errs, os.RemoveAll(f.dir))
	return errors.Join(errs...)
}

// identities makes the hub's and every member's credentials.
func (f *Fleet) identities() error {
	f.HubCredentials = filepath.Join(f.dir, "hub", "credentials")
	if _, err := busauth.Ensure(f.HubCredentials); err != nil {
		return err
	}
	for _, m := range f.Members {
		m.dir = filepath.Join(f.dir, m.Name)
		m.Credentials = filepath.Join(m.dir, "credentials")
		if _, err := busauth.Ensure(m.Credentials); err != nil {
			return err
		}
		kp, err := nkeys.CreateUser()
		if err != nil {
			return err
		}
		seed, _ := kp.Seed()
		m.LeafKey, _ = kp.PublicKey()
		m.LeafSeed = filepath.Join(m.dir, "leaf.nk")
		if err := os.WriteFile(m.LeafSeed, append(seed, '\n'), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Conn connects to the member's NATS as identity id (busauth.Operator
// sets up and reads everything).
func (m *Member) Conn(id string) (*nats.Conn, error) { return dial(m.NATS, m.Credentials, id) }

// HubConn connects to the hub as identity id.
func (f *Fleet) HubConn(id string) (*nats.Conn, error) { return dial(f.Hub, f.HubCredentials, id) }

func dial(s *embednats.Server, dir, id string) (*nats.Conn, error) {
	opts, err := busauth.Dial(dir, id)
	if err != nil {
		return nil, err
	}
	return s.Connect("fleet-"+id, opts...)
}
