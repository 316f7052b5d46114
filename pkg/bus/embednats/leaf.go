package embednats

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// leafOptions sets up the hub's leaf node listener and the leaf's remote.
func leafOptions(so *server.Options, opts Options) error {
	if (opts.Hub != nil || opts.Leaf != nil) && opts.Domain == "" {
		return fmt.Errorf("a hub or a leaf needs a JetStream domain of its own")
	}
	if opts.Hub != nil {
		if len(opts.Users) == 0 {
			return fmt.Errorf("a hub takes authenticated leaf nodes only: Users is empty")
		}
		h := *opts.Hub
		if h.Host == "" {
			h.Host = opts.Host
		}
		if h.Port == 0 {
			h.Port = server.DEFAULT_LEAFNODE_PORT
		}
		so.LeafNode.Host, so.LeafNode.Port = h.Host, h.Port
		// The hub tells its leaves no URL of its own: one embedded server
		// has no other to offer, and a leaf told its listen address would
		// redial it there, around the proxy, load balancer or address it
		// was given.
		so.LeafNode.NoAdvertise = true
	}
	if opts.Hub != nil || opts.Leaf != nil {
		// Requests to the other side's JetStream API (a stream sourcing
		// one across the leaf connection) get replies on
		// $JSC.R.<their domain>.<account>.<stream>.…, so a leaf's
		// permissions can allow the replies of its own requests only.
		so.FeatureFlags = map[string]bool{server.FeatureFlagJsAPIReplyFormatV2: true}
	}
	if opts.Leaf != nil {
		u, err := url.Parse(opts.Leaf.URL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("leaf: hub URL %q: want nats-leaf://host:port", opts.Leaf.URL)
		}
		kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(opts.Leaf.Seed)))
		if err != nil {
			return fmt.Errorf("leaf: seed: %w", err)
		}
		kp.Wipe()
		so.LeafNode.ReconnectInterval = 250 * time.Millisecond
		so.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}, Nkey: strings.TrimSpace(opts.Leaf.Seed)}}
	}
	return nil
}

// LeafURL is the URL leaf nodes join the hub at ("" unless Options.Hub).
func (s *Server) LeafURL() string {
	if s.so.LeafNode.Port == 0 {
		return ""
	}
	return fmt.Sprintf("nats-leaf://%s:%d", s.so.LeafNode.Host, s.so.LeafNode.Port)
}

// Leafs is the number of leaf node connections the server has: on a hub,
// the leaves joined; on a leaf, 1 while it is joined to its hub.
func (s *Server) Leafs() int { return s.ns.NumLeafNodes() }

// WaitLeafs returns once the server has n leaf node connections, or with
// ctx's error.
func (s *Server) WaitLeafs(ctx context.Context, n int) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for s.Leafs() != n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("embedded nats %s: %d leaf connections, want %d: %w", s.ns.Name(), s.Leafs(), n, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// DropLeafs closes the server's leaf node connections (a leaf redials its
// hub after its reconnect interval) and returns how many it closed.
func (s *Server) DropLeafs() int {
	lz, err := s.ns.Leafz(nil)
	if err != nil {
		return 0
	}
	n := 0
	for _, l := range lz.Leafs {
		if s.ns.DisconnectClientByID(l.ID) == nil {
			n++
		}
	}
	return n
}

// LeafNames are the server names of the leaf nodes joined to the hub.
func (s *Server) LeafNames() []string {
	lz, err := s.ns.Leafz(nil)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(lz.Leafs))
	for _, l := range lz.Leafs {
		names = append(names, l.Name)
	}
	return names
}
