package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// rollout is one measured upgrade of a scenario's workload.
type rollout struct {
	Scenario       string  `json:"scenario"`
	Run            runKind `json:"run"`
	Pods           int     `json:"pods"`
	MaxUnavailable string  `json:"maxUnavailable"`
	// Round is the scale run's round (from 1) of a floor of the scale run.
	Round   int     `json:"round,omitempty"`
	Seconds float64 `json:"seconds"`
	Clock   string  `json:"clock"`
	// WritesPerPod are the API writes per upgraded pod by actor, in the
	// run's namespace and inplace-system, from the audit log;
	// FailedWritesPerPod those the API server refused.
	WritesPerPod       map[string]float64        `json:"writesPerPod"`
	FailedWritesPerPod map[string]float64        `json:"failedWritesPerPod,omitempty"`
	Requests           map[string]map[string]int `json:"requests"`
	// CPUMsPerPod is the CPU each process group used, per pod.
	CPUMsPerPod map[string]float64 `json:"cpuMsPerPod"`
	LoadAverage float64            `json:"loadAverage"`
	Phases      []phase            `json:"phases,omitempty"`
	// Traffic is what the traffic probe counted during the run (real
	// nodes only).
	Traffic *trafficCounts `json:"traffic,omitempty"`
	// Shares is the run's time by the actor it waited for, and Timeline
	// one pod's moments (real nodes only: timeline.go).
	Shares   map[string]float64 `json:"shares,omitempty"`
	Timeline []string           `json:"timeline,omitempty"`
	Error    string             `json:"error,omitempty"`
}

// prepared is a run whose workload is created and Ready, waiting for its
// upgrade.
type prepared struct {
	sc   scenario
	kind runKind
	ns   string
	repo string
	wl   workload
	// warmed is the new image a cached scenario put on every node; src
	// the repository it is copied from (newVersion), one of the run's own.
	warmed, src string
}

// source is the repository the run's new version is copied from.
func (r *prepared) source() string {
	if r.src != "" {
		return r.src
	}
	return baseRepo
}

// rolloutLimit bounds one upgrade.
const rolloutLimit = 15 * time.Minute

// prepare makes the run's namespace, repository (1.0.0) and workload; for a
// cached scenario it also puts the new image on every node.
func (p *part) prepare(ctx context.Context, sc scenario, k runKind, i int) (*prepared, error) {
	ns := fmt.Sprintf("%s-%d", sc.Name, i)
	if err := p.namespace(ctx, ns); err != nil {
		return nil, err
	}
	r := &prepared{sc: sc, kind: k, ns: ns, repo: ns + "/app"}
	reg := p.w.Registry
	if _, err := reg.Copy(ctx, baseRepo, versions[0], r.repo, versions[0]); err != nil {
		return nil, err
	}
	r.wl = sc.workloadFor(k, ns, imageRef(reg, r.repo, versions[0], ""))
	if sc.Nodes == realNodes {
		r.wl.Real, r.wl.VolumeDir = true, filepath.Join(p.dir, "volumes")
		if sc.Mesh {
			r.wl.Shape = p.shape
		}
	}
	if err := r.wl.create(ctx, p.client); err != nil {
		return nil, err
	}
	if !sc.Cached {
		return r, nil
	}
	src, digest, err := cachedVersion(ctx, reg, ns, r.repo)
	if err != nil {
		return nil, err
	}
	r.src = src
	r.warmed = reg.Host() + "/" + r.repo + "@" + digest
	return r, warmNodes(ctx, p.client, ns, r.warmed, p.w.NodeNames())
}

// waitReady waits for the run's workload to be Ready and, in a cached
// scenario, for every node to list the new image (waitListed).
func (p *part) waitReady(ctx context.Context, r *prepared) error {
	w, err := watchPods(ctx, p.client, r.ns)
	if err != nil {
		return err
	}
	defer w.stop()
	if err := w.until(ctx, 10*time.Minute, r.wl.key()+" Ready", allReadyOn(r.wl.Name, int(r.wl.Replicas), "")); err != nil {
		return err
	}
	if r.warmed == "" {
		return nil
	}
	if err := waitListed(ctx, p.client, r.warmed, p.w.NodeNames(), listLimit); err != nil {
		// A kubelet lists at most 5 names of an image: measured anyway,
		// pre-pull then pulls what its node has.
		p.log.Warn("new image not listed by every node; measuring anyway", "scenario", r.sc.Name, "run", r.kind, "err", err)
	}
	return ctx.Err()
}

// measure upgrades the prepared workload to 1.1.0 the run's way and
// measures it.
func (p *part) measure(ctx context.Context, r *prepared) rollout {
	res := rollout{Scenario: r.sc.Name, Run: r.kind, Pods: int(r.sc.Replicas), MaxUnavailable: r.sc.strategy(r.kind)}
	var probe *trafficProbe
	var tl *timeline
	if r.sc.Nodes == realNodes {
		var err error
		if probe, err = p.startTraffic(ctx, r); err != nil {
			res.Error = err.Error()
			return res
		}
		if tl, err = startTimeline(ctx, p.client, r.ns, r.wl.Name); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	m := p.meter()
	before, from := m.read(), time.Now()
	var took time.Duration
	var err error
	switch r.kind {
	case inPlace:
		res.Clock = "webhook received → rollout.completed"
		took, res.Phases, err = p.upgradeInPlace(ctx, r)
	case floorRun:
		res.Clock = "first gate write → last pod Ready (an ideal controller: gate False, patch, gate True)"
		took, err = p.upgradeFloor(ctx, r)
	default:
		res.Clock = "template patched → `kubectl rollout status` complete"
		took, err = p.upgradeNative(ctx, r)
	}
	to := time.Now()
	if probe != nil {
		var terr error
		res.Traffic, terr = probe.stop(ctx)
		err = errors.Join(err, terr)
	}
	res.Seconds, res.LoadAverage = took.Seconds(), loadAverage()[0]
	res.CPUMsPerPod = cpuSince(before, m.read(), res.Pods)
	if err != nil {
		res.Error = err.Error()
	}
	reqs, err := p.requests(ctx, from, to)
	if err != nil {
		res.Error = joinErr(res.Error, err)
		return res
	}
	if tl != nil {
		p.keepTimeline(&res, tl.stop(reqs, p.kubeletLogs(), from, to))
	}
	t := tallyOf(reqs, scope(r.ns))
	res.WritesPerPod, res.FailedWritesPerPod, res.Requests = perPod(t.Writes, res.Pods), perPod(t.Failed, res.Pods), t.Detail
	return res
}

// upgradeInPlace pushes 1.1.0 and waits for rollout.completed; the clock
// runs from the webhook's arrival.
func (p *part) upgradeInPlace(ctx context.Context, r *prepared) (time.Duration, []phase, error) {
	return p.pushAndWait(ctx, r.wl, r.source(), r.repo, versions[1], r.sc.MaxUnavailable, r.sc.FreshMB)
}

// upgradeNative pushes 1.1.0 (the project ignores it: the workload did not
// opt in), then patches the template to it and waits as `kubectl rollout
// status` does.
func (p *part) upgradeNative(ctx context.Context, r *prepared) (time.Duration, error) {
	image, err := p.pushQuiet(ctx, r.source(), r.repo, versions[1], r.sc.FreshMB)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := patchTemplate(ctx, p.client, r.wl, image); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, rolloutLimit)
	defer cancel()
	err = rolloutStatus(ctx, p.dyn, r.wl.Kind, r.ns, r.wl.Name)
	return time.Since(start), err
}

// pushQuiet makes tag in repo (newVersion) and waits until its webhook
// went by, so that the project's (empty) reaction is over before the clock
// starts; it returns the image by tag and digest.
func (p *part) pushQuiet(ctx context.Context, src, repo, tag string, freshMB int64) (string, error) {
	digest, err := newVersion(ctx, p.w.Registry, src, repo, tag, freshMB)
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := p.proxy.arrival(wctx, repo, tag); err != nil {
		return "", err
	}
	time.Sleep(time.Second)
	return imageRef(p.w.Registry, repo, tag, digest), nil
}

// podsOf lists the run's pods as its watch sees them.
func podsOf(w *podWatch, app string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.pods() {
		if p.Labels["app"] == app && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
