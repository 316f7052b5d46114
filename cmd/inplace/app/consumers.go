package app

import (
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
)

// Consumers is the durable consumer of every function of the chain. Every
// process creates all of them, whatever it runs itself, so an event
// published before the process that handles it starts is never missed.
// compute-spec's is pinned: one replica at a time takes every outcome, so
// the outcomes of a rollout meet in that replica's grouped writes of its
// record instead of racing the other replicas' compare-and-swaps; a live
// replica takes over PinnedTTL after the pinned one stops pulling.
var Consumers = []bus.ConsumerSpec{
	{Name: "compute-spec", Pinned: true, Types: []string{events.ImagePushed, events.UpgradeRequested, events.UpgradeSucceeded, events.UpgradeFailed,
		events.UpgradeRolledBack, events.RolloutResumed, events.UpgradeApproved, events.UpgradeRejected,
		events.ContainerRestartRequested, events.ContainerResizeRequested}},
	{Name: "pre-pull", Types: []string{events.UpgradePlanned}},
	{Name: "patch-pod", Types: []string{events.ImagePrepulled}},
	{Name: "verify", Types: []string{events.PodPatched, events.PodUpdated}},
}

// pinned names the functions whose consumer is pinned.
func pinned(specs []bus.ConsumerSpec) map[string]bool {
	m := map[string]bool{}
	for _, s := range specs {
		if s.Pinned {
			m[s.Name] = true
		}
	}
	return m
}
