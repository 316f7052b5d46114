package rollout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// UndoTarget is what undoing a rollout goes back to: the image its pods
// ran before it (as their spec wrote it, and the digest they ran), and the
// containers it moved.
type UndoTarget struct {
	Image      string   `json:"image"`
	Digest     string   `json:"digest"`
	Containers []string `json:"containers"`
}

// Ref is the image pinned to the digest it ran.
func (u UndoTarget) Ref() string {
	name, _, _ := strings.Cut(u.Image, "@")
	if u.Digest == "" {
		return u.Image
	}
	return name + "@" + u.Digest
}

// Moved is the last rollout of a workload that moved pods, as `inplace
// undo` sees it: what it moved them to, and what they ran before it.
type Moved struct {
	UpgradeID string     `json:"upgradeID"`
	Target    string     `json:"target"`
	Back      UndoTarget `json:"back"`
	// Why is set when the rollout cannot be undone as one (its pods ran
	// different images before it).
	Why string `json:"why,omitempty"`
}

// Undoable is what `inplace undo` would undo on the workload whose record
// is r: r itself when it moved pods, else the last rollout before it that
// did (r then refused, rejected or has not moved a pod yet).
func Undoable(r *Rollout) (Moved, error) {
	if r.moved() {
		back, err := UndoOf(r)
		return Moved{UpgradeID: r.UpgradeID, Target: r.Target(), Back: back}, err
	}
	switch {
	case r.LastMoved == nil:
		return Moved{}, fmt.Errorf("%s has no rollout that moved a pod: there is nothing to undo", r.Workload)
	case r.LastMoved.Why != "":
		return *r.LastMoved, fmt.Errorf("%s", r.LastMoved.Why)
	}
	return *r.LastMoved, nil
}

// lastMoved is what a rollout after prev carries as the last that moved
// pods.
func lastMoved(prev *Rollout) *Moved {
	if !prev.moved() {
		return prev.LastMoved
	}
	m, err := Undoable(prev)
	if err != nil {
		m.Why = err.Error()
	}
	return &m
}

// moved reports whether the rollout moved a pod. A restart moves none to
// other bytes, nor does a resize: undo looks past them.
func (r *Rollout) moved() bool {
	return r.Request() == nil && slices.ContainsFunc(r.all(), func(p *Pod) bool { return p.State == Succeeded && p.UpgradeID == r.UpgradeID })
}

// UndoOf says what undoing r goes back to: the images recorded when its
// pods were planned, of the pods it moved (succeeded), live or gone. It is
// an error when the rollout moved no pod, or when its pods ran different
// digests before.
func UndoOf(r *Rollout) (UndoTarget, error) {
	byDigest := map[string]*UndoTarget{}
	var order []string
	for _, p := range r.all() {
		if p.State != Succeeded || p.UpgradeID != r.UpgradeID {
			continue
		}
		for _, c := range p.Containers {
			d := imageref.DigestOf(c.FromImageID)
			if d == "" {
				d = imageref.DigestOf(c.FromImage)
			}
			u := byDigest[d]
			if u == nil {
				u = &UndoTarget{Image: c.FromImage, Digest: d}
				byDigest[d] = u
				order = append(order, d)
			}
			if !slices.Contains(u.Containers, c.Name) {
				u.Containers = append(u.Containers, c.Name)
			}
		}
	}
	switch len(order) {
	case 0:
		return UndoTarget{}, fmt.Errorf("upgrade %s of %s moved no pod: there is nothing to undo", r.UpgradeID, r.Workload)
	case 1:
		u := byDigest[order[0]]
		slices.Sort(u.Containers)
		return *u, nil
	}
	var what []string
	for _, d := range order {
		what = append(what, byDigest[d].Ref()+" ("+strings.Join(byDigest[d].Containers, ", ")+")")
	}
	slices.Sort(what)
	return UndoTarget{}, fmt.Errorf("the pods of upgrade %s of %s ran different images before it (%s): "+
		"one undo takes pods back to one image", r.UpgradeID, r.Workload, strings.Join(what, "; "))
}
