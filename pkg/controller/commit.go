package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/inplace-dev/inplace/pkg/bus/keylock"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A recordStep is one delivery's step on a workload's record: it checks the
// record is the rollout observed, applies its input and replans from the
// observation, returning the pods it planned. It runs on the decoded
// record in place, and must leave it untouched when it returns an error.
type recordStep func(r *rollout.Rollout, o *observation) ([]*rollout.Pod, error)

// A look observes the cluster for a record's steps (Rollouts.observation).
type look func(ctx context.Context) (*observation, error)

// commit is one queued change and, once its group is written, what became
// of it.
type commit struct {
	step    recordStep
	done    bool
	r       *rollout.Rollout
	planned []*rollout.Pod
	err     error
}

// commits group the changes of one record that queue while another is
// being written, so that a rollout of n pods is not n decodes, plans and
// encodes of the whole record one after the other (a record holds every
// pod: each write is O(n)). Whoever takes the key's lock writes every
// change queued by then in one compare-and-swap, each step in the order
// queued, each planning under its own input's id (so a redelivered input
// re-emits its own plans, as when written alone). The result is the
// record the steps would have written one by one, in one revision.
//
// A record written back to back is written at most about half of the
// time, and a large one at most a few times a second: its writer first
// waits (spacing) as long as the record's last write took, or
// spacingPerPod for each pod the record holds if that is longer, and the
// changes that arrive meanwhile share the write. The writer's own time is
// a small part of what a write costs: each write is the whole record for
// the bucket and for every watcher of it in every replica (the watched
// copies, pre-pull's Warm, the other replicas' decodes), and that part
// grows with the pods. A write of a small record takes a millisecond, so
// does the wait; the record of a thousand pods is written at most about
// twenty times a second, each write holding every outcome of its wait.
type commits struct {
	locks keylock.Locks
	mu    sync.Mutex
	queue map[string][]*commit
	// last is each key's last write.
	last map[string]lastWrite
	// wait waits d or until ctx ends (a timer; tests replace it).
	wait func(ctx context.Context, key string, d time.Duration)
	// full is how many queued changes end the wait at once (0: no
	// bound): as many as are handled at once (Deps.Workers), past which no
	// change can join the write and the wait only holds back the ones
	// that did.
	full int
	// filled wakes the writer of each key waiting for its queue to fill.
	filled map[string]chan struct{}
}

// lastWrite is how long a key's last write took and how many pods the
// record it wrote held.
type lastWrite struct {
	took time.Duration
	pods int
}

// maxSpacing bounds the wait before a write.
const maxSpacing = 250 * time.Millisecond

// spacingPerPod is the least wait before a write for each pod of the
// record last written.
const spacingPerPod = 50 * time.Microsecond

// spacing is how long the writer of key waits for more changes before
// writing: as long as key's last write took, or spacingPerPod for each
// pod it wrote if that is longer, at most maxSpacing.
func (c *commits) spacing(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.last[key]
	return min(max(w.took, time.Duration(w.pods)*spacingPerPod), maxSpacing)
}

// wrote notes how long a write of key took and the pods it wrote.
func (c *commits) wrote(key string, d time.Duration, pods int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]lastWrite{}
	}
	c.last[key] = lastWrite{took: d, pods: pods}
}

// pause waits spacing(key) before a write of key, or until key's queue
// holds full changes.
func (c *commits) pause(ctx context.Context, key string) {
	d := c.spacing(key)
	if d <= 0 {
		return
	}
	if c.wait != nil {
		c.wait(ctx, key, d)
		return
	}
	c.mu.Lock()
	var filled chan struct{}
	if c.full > 0 {
		if len(c.queue[key]) >= c.full {
			c.mu.Unlock()
			return
		}
		if c.filled == nil {
			c.filled = map[string]chan struct{}{}
		}
		filled = make(chan struct{})
		c.filled[key] = filled
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.filled[key] == filled {
			delete(c.filled, key)
		}
		c.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-filled:
	}
}

// do queues step for key and returns once a write that held it ended:
// the record as written (nil with no error: there is no record) and the
// pods step planned, or the step's or the write's error.
func (c *commits) do(ctx context.Context, key string, ctl *Rollouts, observe look, step recordStep) (*rollout.Rollout, []*rollout.Pod, error) {
	me := &commit{step: step}
	c.enqueue(key, me)

	unlock := c.locks.Lock(key)
	defer unlock()
	if me.done { // written by the holder before us
		return me.r, me.planned, me.err
	}
	c.pause(ctx, key)
	c.mu.Lock()
	group := c.queue[key]
	delete(c.queue, key)
	c.mu.Unlock()
	start := time.Now()
	pods := ctl.writeGroup(ctx, key, observe, group)
	c.wrote(key, time.Since(start), pods)
	return me.r, me.planned, me.err
}

// enqueue queues me for key's next write, and ends its writer's wait when
// the queue is full.
func (c *commits) enqueue(key string, me *commit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue == nil {
		c.queue = map[string][]*commit{}
	}
	c.queue[key] = append(c.queue[key], me)
	if ch := c.filled[key]; ch != nil && len(c.queue[key]) >= c.full {
		close(ch)
		delete(c.filled, key)
	}
}

// alone writes step by itself (one write of a record at a time in this
// process still), for a step whose error must throw away what it touched:
// in a group, the others' write would keep it.
func (c *commits) alone(ctx context.Context, key string, ctl *Rollouts, observe look, step recordStep) (*rollout.Rollout, []*rollout.Pod, error) {
	me := &commit{step: step}
	unlock := c.locks.Lock(key)
	defer unlock()
	ctl.writeGroup(ctx, key, observe, []*commit{me})
	return me.r, me.planned, me.err
}

// writeGroup writes group's steps in one update of key, each planning from
// one observation of the cluster (observe, once for the group), settles
// each and returns how many pods the record written holds (0: none
// written).
// The record written is shared with the process's readers of its revision
// (Decoded: the guards, pre-pull, compute-spec's next observation), by its
// bytes until the write returns and by its revision then, so none of them
// decodes what was just encoded; from then on nobody modifies it.
func (ctl *Rollouts) writeGroup(ctx context.Context, key string, observe look, group []*commit) int {
	var r *rollout.Rollout
	var raw []byte
	o, err := observe(ctx)
	if err != nil {
		for _, c := range group {
			c.done, c.r, c.planned, c.err = true, nil, nil, err
			if errors.Is(err, errNoRecord) {
				c.err = nil
			}
		}
		return 0
	}
	rev, err := ctl.update(ctx, key, func(old []byte) ([]byte, error) {
		prev, err := ctl.decodeToWrite(key, old)
		if err != nil {
			return nil, err
		}
		if prev == nil {
			return nil, errNoRecord
		}
		r = prev
		wrote := false
		for _, c := range group {
			c.planned, c.err = c.step(prev, o)
			wrote = wrote || c.err == nil
		}
		if !wrote {
			return nil, errNoChange
		}
		raw, err = ctl.encoder.Encode(key, prev)
		if err == nil {
			ctl.d.Decoded.Expect(key, raw, prev)
		}
		return raw, err
	})
	pods := 0
	if err == nil {
		ctl.d.Decoded.Put(key, rev, r)
		if rev != 0 {
			ctl.written.Store(key, writtenRecord{raw: raw, rev: rev})
		}
		pods = len(r.Pods)
	}
	for _, c := range group {
		c.done = true
		switch {
		case errors.Is(err, errNoRecord):
			c.r, c.planned, c.err = nil, nil, nil
		case err != nil && !errors.Is(err, errNoChange):
			c.r, c.planned, c.err = nil, nil, err
		case c.err != nil:
			c.r, c.planned = nil, nil
		default:
			c.r = r
		}
	}
	return pods
}

// errNoRecord: the record went away while the group waited.
var errNoRecord = errors.New("compute-spec: no rollout record")

// revisionStore is a Store that tells the revision it wrote (bus.KV).
type revisionStore interface {
	UpdateRevision(ctx context.Context, key string, fn func(old []byte) ([]byte, error)) ([]byte, uint64, error)
}

// fromStore is a revisionStore whose update may start from a value the
// caller holds (bus.KV).
type fromStore interface {
	UpdateRevisionFrom(ctx context.Context, key string, old []byte, rev uint64, fn func(old []byte) ([]byte, error)) ([]byte, uint64, error)
}

// writtenRecord is a record as this process last wrote it.
type writtenRecord struct {
	raw []byte
	rev uint64
}

// update is Store.Update, with the revision written when the store tells
// it (bus.KV; 0 otherwise). Its compare-and-swap starts from the
// process's own last write of key when the store can (one writer: the
// record is not read back), and reads key when another writer moved it on.
func (ctl *Rollouts) update(ctx context.Context, key string, fn func(old []byte) ([]byte, error)) (uint64, error) {
	if st, ok := ctl.d.Store.(fromStore); ok {
		if w, ok := ctl.written.Load(key); ok {
			_, rev, err := st.UpdateRevisionFrom(ctx, key, w.(writtenRecord).raw, w.(writtenRecord).rev, fn)
			return rev, err
		}
	}
	if st, ok := ctl.d.Store.(revisionStore); ok {
		_, rev, err := st.UpdateRevision(ctx, key, fn)
		return rev, err
	}
	_, err := ctl.d.Store.Update(ctx, key, fn)
	return 0, err
}

// decodeToWrite is old, key's value, decoded for a write: a copy of the
// process's own last write of key when old is still that (the common case:
// one writer), without parsing the whole record again.
func (ctl *Rollouts) decodeToWrite(key string, old []byte) (*rollout.Rollout, error) {
	if r := ctl.d.Decoded.Written(key, old); r != nil {
		return r.Clone(), nil
	}
	return Decode(old)
}
