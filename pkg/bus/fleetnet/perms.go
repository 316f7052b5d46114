package fleetnet

import "github.com/inplace-dev/inplace/pkg/bus/embednats"

// Perms are the subjects a member's leaf connection may use on the hub,
// seen from the member: Publish what it may send into the hub, Subscribe
// what the hub may send it.
type Perms struct {
	Publish, Subscribe []string
}

// MemberPerms confine a member's leaf connection. It may send the hub its
// own outcomes (RolloutSubjects), the deliveries of the hub's sourcing
// consumer on its own stream (fleet.<cluster>.sync.>) and the replies of
// its own JetStream API ($JSC.R.<cluster>.>, the hub scopes them so); it
// receives the pushes, its own promotions, the hub's requests to its own
// JetStream API ($JS.<cluster>.API.>) and the flow control of its outcome
// stream. Nothing of another member's.
func MemberPerms(cluster string) Perms {
	return Perms{
		Publish: []string{RolloutSubjects(cluster), syncPrefix(cluster) + ".>", "$JSC.R." + cluster + ".>"},
		Subscribe: []string{PushSubject, PromoteSubjects(cluster), memberAPI(cluster) + ".>",
			"$JS.FC." + OutStream + ".>"},
	}
}

// MemberUser is member cluster's leaf identity on the hub: its public nkey
// ("U…") with MemberPerms.
func MemberUser(cluster, nkey string) embednats.User {
	p := MemberPerms(cluster)
	return embednats.User{Nkey: nkey, Publish: p.Publish, Subscribe: p.Subscribe}
}
