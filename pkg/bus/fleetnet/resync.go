package fleetnet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stale is how long the hub's source of a joined member may go without a
// message or heartbeat (one a second) before Resync restarts it.
const Stale = 5 * time.Second

// Resync restarts the hub's source of each member in joined (the members
// whose leaf connection is up, embednats.Server.LeafNames) that has been
// silent for Stale. A source whose setup request went out while its member
// was away waits 30 s for an answer, then 10 s more, before nats-server
// tries again; removing the source and adding it back sets it up at once,
// resuming after the last message of that member the hub's stream holds.
// It returns the members it restarted, sorted. Run it whenever a member joins, and
// periodically: it changes nothing while every joined source is live.
func Resync(ctx context.Context, js jetstream.JetStream, joined []string) ([]string, error) {
	s, err := js.Stream(ctx, HubStream)
	if err != nil {
		return nil, fmt.Errorf("fleet resync: stream %s: %w", HubStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("fleet resync: stream %s: %w", HubStream, err)
	}
	var stale []string
	for _, si := range info.Sources {
		m := sourceMember(si)
		if m != "" && slices.Contains(joined, m) && (si.Active < 0 || si.Active > Stale || si.Error != nil) {
			stale = append(stale, m)
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	slices.Sort(stale)
	members := sourced(info.Config)
	keep := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return slices.Contains(stale, m) })
	for _, set := range [][]string{keep, members} {
		if _, err := SetupHub(ctx, js, set); err != nil {
			return nil, fmt.Errorf("fleet resync %v: %w", stale, err)
		}
	}
	return stale, nil
}

// sourced are the members the hub's stream sources, in its order.
func sourced(cfg jetstream.StreamConfig) []string {
	var out []string
	for _, src := range cfg.Sources {
		if m := externalMember(src.External); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func sourceMember(si *jetstream.StreamSourceInfo) string {
	if si == nil || si.Name != OutStream {
		return ""
	}
	return externalMember(si.External)
}

// externalMember is the member whose API prefix ($JS.<cluster>.API) ext
// names.
func externalMember(ext *jetstream.ExternalStream) string {
	if ext == nil {
		return ""
	}
	m, ok := strings.CutPrefix(ext.APIPrefix, "$JS.")
	if m, ok2 := strings.CutSuffix(m, ".API"); ok && ok2 && ValidCluster(m) == nil {
		return m
	}
	return ""
}

// ResyncMember restarts each of the member's InStream sources (its parts
// of the hub's PromoteStream) that has been silent for Stale, one at a
// time, and says whether it restarted any. A member's server retries a
// source whose consumer request went out while its leaf connection was
// down only after a back-off of up to 40 s; removing the source and
// adding it back sets it up at once, resuming after the last message of
// that part InStream holds. Run it (on the member's own JetStream) when
// the member joins the hub again, or periodically: it changes nothing
// while every source is live, and a restart while the hub is away only
// tries again.
func ResyncMember(ctx context.Context, js jetstream.JetStream) (bool, error) {
	s, err := js.Stream(ctx, InStream)
	if err != nil {
		return false, fmt.Errorf("fleet member resync: stream %s: %w", InStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return false, fmt.Errorf("fleet member resync: stream %s: %w", InStream, err)
	}
	restarted := false
	for _, si := range info.Sources {
		if si.Name != PromoteStream || !(si.Active < 0 || si.Active > Stale || si.Error != nil) {
			continue
		}
		if err := restartSource(ctx, js, info.Config, si.FilterSubject); err != nil {
			return restarted, fmt.Errorf("fleet member resync: source %s: %w", si.FilterSubject, err)
		}
		restarted = true
	}
	return restarted, nil
}

// restartSource updates stream cfg without its source of PromoteStream
// filtered on filter, then with it again as it was.
func restartSource(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig, filter string) error {
	without := cfg
	without.Sources = slices.DeleteFunc(slices.Clone(cfg.Sources), func(src *jetstream.StreamSource) bool {
		return src.Name == PromoteStream && src.FilterSubject == filter
	})
	for _, c := range []jetstream.StreamConfig{without, cfg} {
		if _, err := js.UpdateStream(ctx, c); err != nil {
			return err
		}
	}
	return nil
}
