package fleetnet

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
)

// HubStreamConfig is the hub's stream of outcomes: no subjects of its own,
// one source per member, its OutStream reached through the member's
// JetStream domain over its leaf connection. The hub's server keeps a
// consumer on each member's stream while the member is joined and resumes
// it after the last message it holds when the member returns.
func HubStreamConfig(members []string) (jetstream.StreamConfig, error) {
	cfg := jetstream.StreamConfig{Name: HubStream, Storage: jetstream.FileStorage,
		Description: "every member's rollout outcomes (fleet.<cluster>.rollout.>), sourced from its " + OutStream}
	for _, m := range members {
		if err := ValidCluster(m); err != nil {
			return cfg, err
		}
		// FilterSubject: the hub takes from a member's stream only that
		// member's own subjects, whatever the member's server put in it, so
		// the cluster a report's subject names is the member it came from.
		cfg.Sources = append(cfg.Sources, &jetstream.StreamSource{Name: OutStream, FilterSubject: RolloutSubjects(m),
			External: &jetstream.ExternalStream{APIPrefix: memberAPI(m), DeliverPrefix: syncPrefix(m)}})
	}
	return cfg, nil
}

// PromoteStreamConfig is the hub's stream of what it sends the members:
// the pushes and every member's promotions. Each member's InStream sources
// its own part of it; Nats-Msg-Id dedups a release published again.
func PromoteStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{Name: PromoteStream, Storage: jetstream.FileStorage,
		Subjects:    []string{PushSubject, AllPromotions},
		Duplicates:  time.Hour,
		Description: "the pushes and promotions the hub sent, sourced by each member's " + InStream}
}

// SetupHub makes (or updates) PromoteStream and HubStream on the hub's
// JetStream, the latter to source every member's outcomes; run it again
// when a member joins or leaves.
func SetupHub(ctx context.Context, js jetstream.JetStream, members []string) (jetstream.Stream, error) {
	cfg, err := HubStreamConfig(members)
	if err != nil {
		return nil, fmt.Errorf("fleet hub setup: %w", err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, PromoteStreamConfig()); err != nil {
		return nil, fmt.Errorf("fleet hub setup: stream %s: %w", PromoteStream, err)
	}
	s, err := js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("fleet hub setup: stream %s: %w", HubStream, err)
	}
	return s, nil
}

// Outcomes are the event types Member.Forward copies to the hub.
var Outcomes = []string{events.RolloutCompleted, events.RolloutHalted}

// Member is what SetupMember makes on a member's own JetStream.
type Member struct {
	// Cluster names the member; its JetStream domain has the same name.
	Cluster string
	// Forward, when set, is the member's own bus: its rollout outcomes
	// (inplace.rollout.completed and .halted) are copied into OutStream as
	// fleet.<cluster>.rollout.completed and .halted, headers and all, so
	// the member's chain reports to the hub without knowing about it.
	Forward *bus.Config
}

// OutStreamConfig is a member's stream of its own outcomes.
func (m Member) OutStreamConfig() jetstream.StreamConfig {
	cfg := jetstream.StreamConfig{Name: OutStream, Storage: jetstream.FileStorage,
		Subjects:    []string{RolloutSubjects(m.Cluster)},
		Description: "the rollout outcomes of cluster " + m.Cluster + ", sourced by the hub's " + HubStream}
	if m.Forward != nil {
		src := &jetstream.StreamSource{Name: m.Forward.Stream}
		for _, typ := range Outcomes {
			src.SubjectTransforms = append(src.SubjectTransforms, jetstream.SubjectTransformConfig{
				Source: m.Forward.Subject(typ), Destination: RolloutSubject(m.Cluster, events.Short(typ))})
		}
		cfg.Sources = []*jetstream.StreamSource{src}
	}
	return cfg
}

// InStreamConfig is a member's stream of what the hub sends it: no
// subjects of its own, two sources of the hub's PromoteStream through the
// hub's domain, one filtered on the pushes and one on the member's own
// promotions (one filter each, so the consumer each creates on the hub
// names its filter in its subject, which MemberPerms confine), delivered
// on the member's own subjects. The member's server keeps those consumers
// while it is joined and, when it returns from a partition, resumes after
// the last message it holds, so a release sent while it was away arrives.
func (m Member) InStreamConfig() jetstream.StreamConfig {
	cfg := jetstream.StreamConfig{Name: InStream, Storage: jetstream.FileStorage,
		Description: "the pushes and promotions the hub sent cluster " + m.Cluster + ", sourced from its " + PromoteStream}
	for _, f := range []string{PushSubject, PromoteSubjects(m.Cluster)} {
		cfg.Sources = append(cfg.Sources, &jetstream.StreamSource{Name: PromoteStream, FilterSubject: f,
			External: &jetstream.ExternalStream{APIPrefix: hubAPI, DeliverPrefix: inPrefix(m.Cluster)}})
	}
	return cfg
}

// SetupMember makes (or updates) OutStream and InStream on the member's
// own JetStream (js connected to the member's server, not the hub's).
func SetupMember(ctx context.Context, js jetstream.JetStream, m Member) error {
	if err := ValidCluster(m.Cluster); err != nil {
		return fmt.Errorf("fleet member setup: %w", err)
	}
	for _, cfg := range []jetstream.StreamConfig{m.OutStreamConfig(), m.InStreamConfig()} {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("fleet member setup %s: stream %s: %w", m.Cluster, cfg.Name, err)
		}
	}
	return nil
}
