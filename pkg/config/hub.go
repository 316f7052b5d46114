package config

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

// HubFunctions are the functions a fleet hub may run: the sources of
// pushes that need no cluster. The chain runs on the members.
var HubFunctions = []string{"receiver"}

// validateHub checks the fleet hub's flags and reads its policy into
// p.Fleet. A hub left with the default --functions runs the receiver
// alone; one given a function of the chain is refused.
func (p *Process) validateHub() error {
	if !p.FleetHub {
		if p.FleetPolicy != "" {
			return fmt.Errorf("--fleet-policy: only with --fleet-hub")
		}
		return nil
	}
	if p.FleetMember != "" {
		return fmt.Errorf("--fleet-hub and --fleet-member: a process is the hub or a member, not both")
	}
	if p.FleetPolicy == "" {
		return fmt.Errorf("--fleet-policy: required with --fleet-hub")
	}
	if slices.Equal(p.Functions, AllFunctions) {
		p.Functions, p.WatchPods = slices.Clone(HubFunctions), false
	}
	for _, f := range p.Functions {
		if !slices.Contains(HubFunctions, f) {
			return fmt.Errorf("--functions: a fleet hub runs %s only (the members run the chain), not %q",
				strings.Join(HubFunctions, ", "), f)
		}
	}
	p.WatchPods = false
	text, err := os.ReadFile(p.FleetPolicy)
	if err != nil {
		return fmt.Errorf("--fleet-policy: %w", err)
	}
	pol, err := fleet.Parse(string(text))
	if err != nil {
		return fmt.Errorf("--fleet-policy %s: %w", p.FleetPolicy, err)
	}
	for i, s := range pol.Stages {
		for j, c := range s.Clusters {
			if err := fleetnet.ValidCluster(c); err != nil {
				return fmt.Errorf("--fleet-policy %s: fleet policy: stages[%d].clusters[%d]: %w", p.FleetPolicy, i, j, err)
			}
		}
	}
	p.Fleet = pol
	return nil
}
