package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Settings of a run of the suite, from the environment.
var (
	// runs is how many times each fault scenario runs (make faults: many).
	runs = envInt("INPLACE_FAULTS_RUNS", 1)
	// pods is the size of the Deployment each scenario rolls out.
	pods = envInt("INPLACE_FAULTS_PODS", 4)
	// minKills is how many times in a row the kill scenario kills.
	minKills = envInt("INPLACE_FAULTS_KILLS", 10)
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// tally is what one scenario did over its runs.
type tally struct {
	Runs     int `json:"runs"`
	Rollouts int `json:"rollouts"`
	Faults   int `json:"faults"`
	Pods     int `json:"pods"`
	// Lost counts what a check found wrong: a pod not on its target once,
	// a missing or wrong completion, a gate left False, anything left paused
	// or behind.
	Lost int `json:"lost"`
	// FaultKind says what Faults counts.
	FaultKind string `json:"faultKind"`
}

var (
	figuresMu sync.Mutex
	figures   = map[string]*tally{}
)

// record adds one run's figures and rewrites the report.
func record(t *testing.T, scenario, kind string, rollouts, faults, podCount, lost int) {
	figuresMu.Lock()
	defer figuresMu.Unlock()
	f := figures[scenario]
	if f == nil {
		f = &tally{FaultKind: kind}
		figures[scenario] = f
	}
	f.Runs++
	f.Rollouts += rollouts
	f.Faults += faults
	f.Pods += podCount
	f.Lost += lost
	t.Logf("figures: %s: %d rollouts, %d %s, %d pods, %d lost", scenario, rollouts, faults, kind, podCount, lost)
	if path := os.Getenv("INPLACE_FAULTS_REPORT"); path != "" {
		if err := writeReport(path); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
}

// writeReport writes the figures as JSON and as a Markdown table.
func writeReport(path string) error {
	raw, err := json.MarshalIndent(figures, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return err
	}
	names := make([]string, 0, len(figures))
	for n := range figures {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	sb.WriteString("| fault | runs | rollouts | faults injected | pods upgraded | lost |\n|---|---|---|---|---|---|\n")
	for _, n := range names {
		f := figures[n]
		fmt.Fprintf(&sb, "| %s | %d | %d | %d %s | %d | %d |\n", n, f.Runs, f.Rollouts, f.Faults, f.FaultKind, f.Pods, f.Lost)
	}
	return os.WriteFile(strings.TrimSuffix(path, ".json")+".md", []byte(sb.String()), 0o644)
}
