package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"
)

// runScale runs the throughput, latency and memory parts on one world of
// the zero profile, with nodes enough for the scale run.
func runScale(ctx context.Context, o options, rep *report, log *slog.Logger) error {
	prof := zero()
	rep.Profiles = append(rep.Profiles, prof)
	const podsPerNode = 250 // a node's /24 holds 253 pod IPs
	nodes := max(3, (o.scalePods+2*podsPerNode/10)/(podsPerNode*9/10)+1)
	log.Info("starting the world", "profile", prof.Name, "nodes", nodes)
	p, err := startPart(ctx, o, prof, nodes, podsPerNode, log)
	if err != nil {
		return err
	}
	defer p.stop()
	dir := filepath.Join(p.dir, "project")
	var sw *scaleWorkload
	if o.parts["scale"] {
		log.Info("creating the scale run's pods", "pods", o.scalePods)
		if sw, err = p.scaleWorkload(ctx, o.scalePods); err != nil {
			return err
		}
	}
	// The floor of one run is noisy on a shared machine (22 s to 29 s at
	// 1,000 pods between runs of the same commit), so the scale run goes
	// in rounds, each every replica count and then the floor, and the
	// goals take the median of the rounds' ratios: a ratio compares runs
	// minutes apart rather than a run with a floor taken at another time.
	run := 0 // in-place runs so far; each upgrades to a new version
	for round := 1; sw != nil && round <= o.scaleRounds; round++ {
		for _, n := range o.replicas {
			if n > 1 {
				if why := replicasUnavailable("."); why != "" {
					if round == 1 {
						log.Info("scale run: not available", "replicas", n, "why", why)
						rep.Throughput = append(rep.Throughput, throughput{Replicas: n, Pods: o.scalePods, Unavailable: why})
					}
					continue
				}
			}
			log.Info("scale run", "round", round, "replicas", n)
			if err := p.runProject(ctx, dir, n); err != nil {
				rep.Throughput = append(rep.Throughput, throughput{Replicas: n, Pods: o.scalePods, Round: round, Error: err.Error()})
				continue
			}
			run++
			tag, fresh := scaleVersion(run)
			t := p.throughputRun(ctx, sw.wl, sw.repo, tag, fresh, n)
			t.Round = round
			rep.Throughput = append(rep.Throughput, t)
			if o.parts["latency"] && rep.Latency == nil && n == 1 {
				log.Info("webhook → first patch", "samples", o.latencySamples)
				l := p.latencyRun(ctx, o.latencySamples)
				rep.Latency = &l
			}
		}
		p.stopProject()
		log.Info("scale run's floor", "round", round)
		f := p.scaleFloor(ctx, sw)
		f.Round = round
		rep.Floors = append(rep.Floors, f)
	}
	if o.parts["latency"] && rep.Latency == nil {
		if err := p.runProject(ctx, dir, 1); err != nil {
			return err
		}
		log.Info("webhook → first patch", "samples", o.latencySamples)
		l := p.latencyRun(ctx, o.latencySamples)
		rep.Latency = &l
	}
	if o.parts["memory"] {
		for _, n := range slices.Sorted(slices.Values(o.memoryPods)) {
			log.Info("memory", "pods", n)
			rep.Memory = append(rep.Memory, p.memoryRun(ctx, n))
		}
	}
	return nil
}

// scaleWorkload is the scale run's Deployment and repository.
type scaleWorkload struct {
	wl        workload
	repo      string
	firstRef  string // the image it started from, by digest
	namespace string
}

func (p *part) scaleWorkload(ctx context.Context, n int) (*scaleWorkload, error) {
	const ns = "scale"
	if err := p.namespace(ctx, ns); err != nil {
		return nil, err
	}
	s := &scaleWorkload{repo: ns + "/app", namespace: ns}
	digest, err := p.w.Registry.Copy(ctx, baseRepo, versions[0], s.repo, versions[0])
	if err != nil {
		return nil, err
	}
	s.firstRef = imageRef(p.w.Registry, s.repo, versions[0], digest)
	s.wl = throughputWorkload(ns, imageRef(p.w.Registry, s.repo, versions[0], ""), n)
	if err := s.wl.create(ctx, p.client); err != nil {
		return nil, err
	}
	w, err := watchPods(ctx, p.client, ns)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	return s, w.until(ctx, rolloutLimit, "the scale run's pods Ready", allReadyOn(s.wl.Name, n, ""))
}

// scaleFloor moves every pod of the scale run back to its first image at
// once, as an ideal controller would (the project is stopped): the time
// the kubelet needs for the same restarts.
func (p *part) scaleFloor(ctx context.Context, s *scaleWorkload) rollout {
	res := rollout{Scenario: "scale", Run: floorRun, Pods: int(s.wl.Replicas), MaxUnavailable: "100%",
		Clock: "first patch → last pod Ready on the image (the benchmark patches every pod itself)"}
	p.eventsWritten(ctx)
	m := p.meter()
	before, from := m.read(), time.Now()
	took, err := p.floor(ctx, s.namespace, s.wl.Name, s.firstRef, res.Pods, false, nil)
	res.Seconds, res.LoadAverage = took.Seconds(), loadAverage()[0]
	res.CPUMsPerPod = cpuSince(before, m.read(), res.Pods)
	if err != nil {
		res.Error = err.Error()
	}
	reqs, err := p.requests(ctx, from, time.Now())
	if err != nil {
		res.Error = joinErr(res.Error, err)
		return res
	}
	t := tallyOf(reqs, map[string]bool{s.namespace: true})
	res.WritesPerPod, res.Requests = perPod(t.Writes, res.Pods), t.Detail
	return res
}

// scaleVersion is the tag the scale run's in-place run i (from 1)
// upgrades to: the base image's next versions first, then images of their
// own (1 MiB of random bytes; the zero profile charges no pull), so that
// each run moves every pod to a digest no rollout has had.
func scaleVersion(i int) (tag string, freshMB int64) {
	if i < len(versions) {
		return versions[i], 0
	}
	return fmt.Sprintf("1.%d.0", i), 1
}
