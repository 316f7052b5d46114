package fleetnet

import (
	"fmt"
	"regexp"
)

const (
	// HubDomain is the hub's JetStream domain; each member's domain is its
	// cluster name.
	HubDomain = "hub"
	// PushSubject carries a push published once at the hub to every member.
	PushSubject = "fleet.push"
	// HubStream, on the hub, holds every member's outcomes, sourced from
	// each member's OutStream (so outcomes a member recorded while the hub
	// was away arrive when it returns).
	HubStream = "FLEET"
	// OutStream, on a member, holds its own outcomes
	// (RolloutSubjects(cluster)).
	OutStream = "FLEET_OUT"
	// InStream, on a member, holds what the hub sent it: pushes and its own
	// promotions, sourced from the hub's PromoteStream.
	InStream = "FLEET_IN"
	// PromoteStream, on the hub, holds every push (PushSubject) and every
	// promotion (fleet.<cluster>.promote.>) the hub sent, so a member that
	// is away when one is sent takes it when it returns.
	PromoteStream = "FLEET_PROMOTE"
)

// AllPromotions are every member's promotion subjects on the hub.
const AllPromotions = "fleet.*.promote.>"

// clusterName is what a cluster may be called: one subject token, lower
// case, also a JetStream domain.
var clusterName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidCluster says why name cannot name a member cluster, or nil.
func ValidCluster(name string) error {
	if !clusterName.MatchString(name) {
		return fmt.Errorf("fleet cluster %q: want lower-case letters, digits and '-' (at most 63)", name)
	}
	if name == HubDomain {
		return fmt.Errorf("fleet cluster %q: the hub's domain", name)
	}
	return nil
}

// RolloutSubject is the subject of a member's rollout outcome: an event
// of short type x.y (rollout.completed) goes to fleet.<cluster>.x.y, as
// inplace.x.y does on a cluster's own bus.
func RolloutSubject(cluster, short string) string { return "fleet." + cluster + "." + short }

// RolloutSubjects are the subjects of a member's outcomes,
// fleet.<cluster>.rollout.>; AllRollouts every member's.
func RolloutSubjects(cluster string) string { return "fleet." + cluster + ".rollout.>" }

// AllRollouts are every member's outcome subjects on the hub.
const AllRollouts = "fleet.*.rollout.>"

// PromoteSubjects are the hub's messages to one member (a stage starting
// there, an approval): fleet.<cluster>.promote.>.
func PromoteSubjects(cluster string) string { return "fleet." + cluster + ".promote.>" }

// syncPrefix is where the hub's sourcing consumer on a member delivers:
// the member's own subjects, so no other member can write into that flow.
func syncPrefix(cluster string) string { return "fleet." + cluster + ".sync" }

// inPrefix is where the hub's consumers of PromoteStream deliver to a
// member's InStream: the member's own subjects, so no other member reads
// that flow.
func inPrefix(cluster string) string { return "fleet." + cluster + ".in" }

// hubAPI is the hub's JetStream API as a member reaches it.
const hubAPI = "$JS." + HubDomain + ".API"

// memberAPI is the member's JetStream API as the hub reaches it.
func memberAPI(cluster string) string { return "$JS." + cluster + ".API" }
