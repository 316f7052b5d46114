// Package fleet is the pure core of a fleet: one push promoted through
// several clusters in stages. A Policy (YAML or JSON, Parse) names the
// stages in order, the clusters of each, the workloads the push moves, and
// which stages wait for an approval before they start or for an analysis
// verdict before they count as done. A Record is the hub's durable view of
// one push: the stages released, the gates given, the halt, and each
// member cluster's last reported rollout outcomes. Decide says, from a
// policy and a record alone, which stages may start now, which are done,
// which wait, and whether the fleet is halted; Apply checks a member's
// report against the record before it changes anything.
//
// A stage starts when every stage before it is done. It is done when every
// cluster of it reported a succeeded rollout of every workload of the
// policy for this push (and, when the stage names an analysis, a Passed
// verdict was recorded). A halted or failed rollout anywhere halts the
// fleet: the stages after it never start.
//
// Nothing here publishes, reads a bucket or keeps time: the hub's
// controller (pkg/controller/fleet) does, and calls these functions with
// what it read. Like the rest of pkg/core it imports neither client-go nor
// NATS.
package fleet
