// Package fleetnet is the transport of a fleet: one hub and member
// clusters, each member's NATS server a leaf node of the hub's.
//
// NATS documents two ways to join sites: plain subject import/export
// between accounts of one server or cluster, and leaf nodes, where a
// remote server extends the hub's subject space over one outbound
// connection, authenticated and confined by the hub, while keeping its
// own JetStream domain ("JetStream on leaf nodes", "Leaf Nodes" in
// docs.nats.io). Imports and exports need both sides in one system, so a
// member would stop when the hub does; a leaf keeps serving its local
// clients, streams and buckets when its hub connection is down, and a
// stream in one domain can source a stream in another through
// $JS.<domain>.API, resuming where it stopped. So: leaf nodes, a JetStream
// domain per cluster (HubDomain for the hub, the cluster's name for each
// member), and sourced streams both ways: the hub's HubStream sources each
// member's outcomes, each member's InStream sources its part of the hub's
// PromoteStream.
//
// Subjects:
//   - PushSubject (fleet.push): published once at the hub, stored in its
//     PromoteStream, sourced into every member's InStream.
//   - PromoteSubjects (fleet.<cluster>.promote.>): the hub to one member,
//     stored in PromoteStream and sourced into that member's InStream
//     alone, so a member cut off when it was sent takes it when it
//     returns (ResyncMember makes that prompt); PromotePush
//     (fleet.<cluster>.promote.push) is a push released to that member,
//     which Bridge moves onto the member's own bus as the image.pushed it
//     carries.
//   - RolloutSubjects (fleet.<cluster>.rollout.>): a member's outcomes,
//     kept in its own OutStream (Member.Forward copies its chain's
//     inplace.rollout.* there); the hub's HubStream sources every member's
//     OutStream, so outcomes recorded while the hub was away arrive when
//     it is back (Resync makes that immediate).
//
// Identities: a member's leaf connection authenticates with an nkey of its
// own, which the hub confines to MemberPerms: its own outcomes, the
// traffic of the hub's sourcing of its stream and its consumers of the
// pushes and its own promotions in, the pushes, its own promotions and its
// own domain's API requests out. A member can neither send nor read
// another member's outcomes or promotions, whatever runs on its server.
//
// The package sets up streams and says who may use which subject; it does
// not decide promotions (that is the hub's controller) and does not run
// servers (pkg/bus/embednats does).
package fleetnet
