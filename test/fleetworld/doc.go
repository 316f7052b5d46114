// Package fleetworld tests the test world's fleet (world.StartFleet): three
// clusters, each its own control plane and nodes, their NATS servers leaf
// nodes of a hub. The fleet's own behaviour is tested where it is built.
package fleetworld
