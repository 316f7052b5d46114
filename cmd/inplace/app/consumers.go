package app

import (
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
)

// Consumers is the durable consumer of every function of the chain. Every
// process creates all of them, whatever it runs itself, so an event
// published before the process that handles it starts is never missed.
var Consumers = []bus.ConsumerSpec{
	{Name: "compute-spec", Types: []string{events.ImagePushed, events.UpgradeRequested, events.UpgradeSucceeded, events.UpgradeFailed,
		events.UpgradeRolledBack, events.RolloutResumed, events.UpgradeApproved, events.UpgradeRejected,
		events.ContainerRestartRequested, events.ContainerResizeRequested}},
	{Name: "pre-pull", Types: []string{events.UpgradePlanned}},
	{Name: "patch-pod", Types: []string{events.ImagePrepulled}},
	{Name: "verify", Types: []string{events.PodPatched, events.PodUpdated, events.ContainerRestarted}},
}
