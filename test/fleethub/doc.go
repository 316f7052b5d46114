// Package fleethub tests `inplace run --fleet-hub` as a real process over
// the test world's fleet (world.StartFleet): a push the hub's receiver
// takes moves through the members stage by stage.
package fleethub
