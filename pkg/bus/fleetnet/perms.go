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
// consumer on its own stream (fleet.<cluster>.sync.>), the replies of its
// own JetStream API ($JSC.R.<cluster>.>, the hub scopes them so), and, for
// its InStream's sourcing of the hub's PromoteStream, the requests that
// create a consumer filtered on the pushes or on its own promotions (the
// hub's server refuses a request whose body filters on anything else than
// its subject names) and the flow control of those consumers; it receives
// the pushes, its own promotions, the hub's requests to its own JetStream
// API ($JS.<cluster>.API.>), the flow control of its outcome stream, the
// deliveries of its PromoteStream consumers (fleet.<cluster>.in.>) and the
// replies to its InStream's consumer requests. Nothing of another
// member's promotions.
func MemberPerms(cluster string) Perms {
	create := hubAPI + ".CONSUMER.CREATE." + PromoteStream + ".*."
	return Perms{
		Publish: []string{RolloutSubjects(cluster), syncPrefix(cluster) + ".>", "$JSC.R." + cluster + ".>",
			create + PushSubject, create + PromoteSubjects(cluster), "$JS.FC." + PromoteStream + ".>"},
		Subscribe: []string{PushSubject, PromoteSubjects(cluster), memberAPI(cluster) + ".>",
			"$JS.FC." + OutStream + ".>", inPrefix(cluster) + ".>", "$JSC.R." + HubDomain + ".*." + PromoteStream + ".>"},
	}
}

// MemberUser is member cluster's leaf identity on the hub: its public nkey
// ("U…") with MemberPerms.
func MemberUser(cluster, nkey string) embednats.User {
	p := MemberPerms(cluster)
	return embednats.User{Nkey: nkey, Publish: p.Publish, Subscribe: p.Subscribe}
}
