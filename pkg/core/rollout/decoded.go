package rollout

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"sync"
)

// Decoded keeps the last record decoded for each key, by the KV revision
// it was read at, so the deliveries that read one revision of a record
// (patch-pod's and verify's guards, compute-spec's observation) decode it
// once between them instead of once each. A record holds every pod of its
// rollout, so a decode costs O(pods): without the cache a rollout of n
// pods decoded it several times per pod, O(n²) in all.
//
// A revision names one value of one key for good (the bucket's stream
// sequence), so a hit is the record as read, never a stale one: the caller
// still reads the key (and its revision) from the KV on every delivery.
// The zero value is ready; a nil *Decoded decodes every time.
type Decoded struct {
	mu     sync.Mutex
	last   map[string][]decodedRecord // newest last, at most keepRevisions
	expect map[string]expected
}

// keepRevisions is how many revisions of a key stay decoded: a reader that
// read the key just before a write still finds its revision (with several
// writes a second, a cache of one missed about a fifth of the guards'
// reads).
const keepRevisions = 4

// expected is a record a writer encoded and is about to write.
type expected struct {
	raw []byte
	r   *Rollout
}

type decodedRecord struct {
	rev uint64
	r   *Rollout // decoded whole, or nil
	v   *View    // read one pod at a time, or nil
}

// Get returns raw (key's value at revision rev) decoded. The result is
// shared with every other caller of the same revision: it must not be
// modified. Revision 0 (unknown) is never cached.
func (d *Decoded) Get(key string, rev uint64, raw []byte) (*Rollout, error) {
	if d != nil && rev != 0 {
		d.mu.Lock()
		c := find(d.last[key], rev)
		d.mu.Unlock()
		if c != nil && c.r != nil {
			return c.r, nil
		}
		if r := d.Written(key, raw); r != nil {
			d.Put(key, rev, r)
			return r, nil
		}
	}
	var r Rollout
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	d.Put(key, rev, &r)
	return &r, nil
}

// View returns raw (key's value at revision rev) to be read one pod at a
// time, shared like Get's result with every other reader of the revision:
// the record Get (or a writer's Put, Expect) decoded whole, or an index
// of raw whose pods are decoded as they are read, those unchanged since
// the newest revision viewed before taken from it. Revision 0 (unknown)
// is never cached.
func (d *Decoded) View(key string, rev uint64, raw []byte) (*View, error) {
	if d == nil {
		return NewView(raw, nil)
	}
	d.mu.Lock()
	if c := find(d.last[key], rev); rev != 0 && c != nil {
		if c.v == nil {
			c.v = ViewOf(c.r)
		}
		d.mu.Unlock()
		return c.v, nil
	}
	prev := d.newestView(key)
	d.mu.Unlock()
	if r := d.Written(key, raw); r != nil {
		return d.keepView(key, rev, ViewOf(r)), nil
	}
	v, err := NewView(raw, prev)
	if err != nil {
		return nil, err
	}
	return d.keepView(key, rev, v), nil
}

// newestView is the view of key's newest revision kept with one, or nil;
// d.mu is held.
func (d *Decoded) newestView(key string) *View {
	kept := d.last[key]
	for i := len(kept) - 1; i >= 0; i-- {
		if kept[i].v != nil {
			return kept[i].v
		}
	}
	return nil
}

// keepView keeps v as key's view at rev (unless rev is 0) and returns the
// view kept there: v, or one another reader made first.
func (d *Decoded) keepView(key string, rev uint64, v *View) *View {
	if rev == 0 {
		return v
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[string][]decodedRecord{}
	}
	d.keep(key, decodedRecord{rev: rev, v: v})
	if c := find(d.last[key], rev); c != nil && c.v != nil {
		return c.v
	}
	return v
}

// Put keeps r as key's value at revision rev, for a writer that encoded
// r itself and wrote it at rev: the readers of that revision then decode
// nothing. r must not be modified afterwards (it is shared from now on).
func (d *Decoded) Put(key string, rev uint64, r *Rollout) {
	if d == nil || rev == 0 || r == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[string][]decodedRecord{}
	}
	d.keep(key, decodedRecord{rev: rev, r: r})
}

// keep adds c to key's revisions kept, or sets what it holds of a
// revision kept already; d.mu is held.
func (d *Decoded) keep(key string, c decodedRecord) {
	kept := d.last[key]
	if old := find(kept, c.rev); old != nil {
		old.r, old.v = cmp.Or(old.r, c.r), cmp.Or(old.v, c.v)
		return
	}
	if len(kept) == keepRevisions && kept[0].rev > c.rev {
		return // older than every revision kept
	}
	i := len(kept)
	for i > 0 && kept[i-1].rev > c.rev {
		i--
	}
	kept = slices.Insert(kept, i, c)
	if len(kept) > keepRevisions {
		kept = slices.Delete(kept, 0, 1)
	}
	d.last[key] = kept
}

// find is revision rev among kept, or nil.
func find(kept []decodedRecord, rev uint64) *decodedRecord {
	for i := range kept {
		if kept[i].rev == rev {
			return &kept[i]
		}
	}
	return nil
}

// Expect tells d that r encodes to raw, which its writer is about to
// write at key: a reader that gets to the new revision before the writer
// knows its number (a watch of the bucket, a guard reading right after the
// write) finds r by the bytes instead of decoding them. One expectation
// per key, the last; r must not be modified afterwards.
func (d *Decoded) Expect(key string, raw []byte, r *Rollout) {
	if d == nil || r == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.expect == nil {
		d.expect = map[string]expected{}
	}
	d.expect[key] = expected{raw: raw, r: r}
}

// Written is the record last expected at key if raw is its bytes (the
// process's own last write of key, still the newest), or nil. It is
// shared: a writer modifies a Clone of it.
func (d *Decoded) Written(key string, raw []byte) *Rollout {
	if d == nil || raw == nil {
		return nil
	}
	d.mu.Lock()
	e, ok := d.expect[key]
	d.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.r
	}
	return nil
}
