package main

import (
	"context"
	"time"
)

// throughput is one rollout of many pods at once on a node that costs
// nothing: what the project itself can do.
type throughput struct {
	Replicas int `json:"replicasPerFunction"`
	// Round is the scale run's round (from 1) this run was part of.
	Round      int     `json:"round,omitempty"`
	Pods       int     `json:"pods"`
	Seconds    float64 `json:"seconds"`
	PodsPerSec float64 `json:"podsPerSecond"`
	Clock      string  `json:"clock"`
	// RequestsPerPod is every request of the project (reads, watches and
	// writes, anywhere) per pod; ProjectRequests breaks them down.
	RequestsPerPod     float64            `json:"requestsPerPod"`
	ProjectRequests    map[string]int     `json:"projectRequests"`
	WritesPerPod       map[string]float64 `json:"writesPerPod"`
	FailedWritesPerPod map[string]float64 `json:"failedWritesPerPod,omitempty"`
	CPUMsPerPod        map[string]float64 `json:"cpuMsPerPod"`
	LoadAverage        float64            `json:"loadAverage"`
	// MachineBusy is the fraction of all the machine's CPU time that was
	// busy during the run (every process, the bench's and others').
	MachineBusy float64 `json:"machineBusy"`
	Phases      []phase `json:"phases,omitempty"`
	// Replicas' shares of the work, from their metrics.
	Shares []replicaShare `json:"shares,omitempty"`
	Error  string         `json:"error,omitempty"`
	// Unavailable says why the run was not made (several replicas per
	// function when main does not support them).
	Unavailable string `json:"notAvailable,omitempty"`
}

// throughputWorkload is the scale run's Deployment: n pods, opted in with
// max-unavailable 100%, no readiness gate (so the project's target is one
// write per pod).
func throughputWorkload(ns, image string, n int) workload {
	return workload{Kind: "Deployment", Namespace: ns, Name: "app", Image: image, Replicas: int32(n),
		Annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "100%"}}
}

// throughputRun pushes tag to the scale run's repository and measures the
// rollout of every pod, webhook to rollout.completed.
func (p *part) throughputRun(ctx context.Context, wl workload, repo, tag string, freshMB int64, replicas int) throughput {
	res := throughput{Replicas: replicas, Pods: int(wl.Replicas), Clock: "webhook received → rollout.completed"}
	p.eventsWritten(ctx)
	m := p.meter()
	shares := p.project.shareMetrics(ctx)
	profiled := p.project.profileReplicas(ctx, profilesDir(), 20*time.Second, p.log)
	busy, total := machineTicks()
	before, from := m.read(), time.Now()
	took, phases, err := p.pushAndWait(ctx, wl, baseRepo, repo, tag, int(wl.Replicas), freshMB)
	res.MachineBusy = busySince(busy, total)
	res.Shares = sharesSince(shares, p.project.shareMetrics(ctx))
	profiled()
	res.Seconds, res.Phases, res.LoadAverage = took.Seconds(), phases, loadAverage()[0]
	res.PodsPerSec = float64(res.Pods) / max(res.Seconds, 1e-9)
	res.CPUMsPerPod = cpuSince(before, m.read(), res.Pods)
	if err != nil {
		res.Error = err.Error()
	}
	reqs, err := p.requests(ctx, from, time.Now())
	if err != nil {
		res.Error = joinErr(res.Error, err)
		return res
	}
	anywhere := tallyOf(reqs, nil)
	res.RequestsPerPod = float64(anywhere.Requests[actorProject]) / float64(res.Pods)
	res.ProjectRequests = anywhere.Detail[actorProject]
	local := tallyOf(reqs, scope(wl.Namespace))
	res.WritesPerPod, res.FailedWritesPerPod = perPod(local.Writes, res.Pods), perPod(local.Failed, res.Pods)
	// Past the clock: the next run starts once this one's deliveries,
	// verify's timers among them, are settled.
	waited, err := p.out.settle(ctx, time.Minute)
	p.log.Info("the bus settled after the run", "replicas", replicas, "waited", waited.Round(time.Millisecond), "err", err)
	return res
}

// eventsWritten waits until the simulated nodes have written the Events of
// what came before (the pods' creation, the run before): 1,000 pods' start
// or restart Events take the API server seconds to write, and a run whose
// clock starts earlier pays for them in its time and CPU.
func (p *part) eventsWritten(ctx context.Context) {
	if p.w.Kubelet == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	err := p.w.Kubelet.EventsWritten(ctx, time.Second)
	p.log.Info("the nodes' Events are written", "waited", time.Since(start).Round(time.Millisecond), "err", err)
}

// pushAndWait makes tag in repo from src (newVersion) and waits for the
// workload's rollout.completed; the time runs from the webhook's arrival.
func (p *part) pushAndWait(ctx context.Context, wl workload, src, repo, tag string, budget int, freshMB int64) (time.Duration, []phase, error) {
	ready, err := watchReady(ctx, p.client, wl.Namespace)
	if err != nil {
		return 0, nil, err
	}
	defer ready.stop()
	from := time.Now()
	digest, err := newVersion(ctx, p.w.Registry, src, repo, tag, freshMB)
	if err != nil {
		return 0, nil, err
	}
	ready.target(digest)
	ctx, cancel := context.WithTimeout(ctx, rolloutLimit)
	defer cancel()
	hook, err := p.proxy.arrival(ctx, repo, tag)
	if err != nil {
		return 0, nil, err
	}
	out, err := p.out.wait(ctx, wl.key(), digest)
	if err != nil {
		return time.Since(hook), nil, err
	}
	took := out.At.Sub(hook)
	if out.Halted {
		return took, nil, errHalted(out)
	}
	stamps, err := p.out.stamps(ctx, out.Data.UpgradeID, digest, from)
	if err != nil {
		return took, nil, err
	}
	for k, at := range ready.stamps() {
		if st, ok := stamps[k]; ok {
			st.Ready = at
			stamps[k] = st
		}
	}
	return took, breakdown(hook, out.At, stamps, budget), nil
}
