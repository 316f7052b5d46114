package bus

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// WatchLatest is WatchRevisions for a reader that needs only each key's
// newest value (level-triggered): the updates already waiting when fn
// returns are taken together, and fn sees only the newest of each key
// among them. A reader slower than the writes (pre-pull's Warm decodes a
// whole rollout record at each call) then skips the revisions that a
// newer one has replaced, instead of working through each of them.
func (k *KV) WatchLatest(ctx context.Context, fn func(key string, rev uint64, value []byte)) error {
	return k.watch(ctx, func(e jetstream.KeyValueEntry, more <-chan jetstream.KeyValueEntry) {
		for _, e := range newest(e, more) {
			fn(e.Key(), e.Revision(), e.Value())
		}
	})
}

// maxTaken bounds the updates newest takes at once, so that a stream of
// writes faster than the reader still lets it call fn.
const maxTaken = 1024

// newest is first and the updates waiting in more (up to maxTaken), the
// newest of each key, in the order their keys first came. A watch delivers
// a key's revisions in order, so a later update of a key replaces the
// earlier. nil (the end of the initial values) is skipped; a closed more
// ends the taking (the caller's next receive sees it).
func newest(first jetstream.KeyValueEntry, more <-chan jetstream.KeyValueEntry) []jetstream.KeyValueEntry {
	var out []jetstream.KeyValueEntry
	at := map[string]int{}
	add := func(e jetstream.KeyValueEntry) {
		if e == nil {
			return
		}
		if i, ok := at[e.Key()]; ok {
			out[i] = e
			return
		}
		at[e.Key()] = len(out)
		out = append(out, e)
	}
	add(first)
	for range maxTaken {
		select {
		case e, ok := <-more:
			if !ok {
				return out
			}
			add(e)
		default:
			return out
		}
	}
	return out
}
