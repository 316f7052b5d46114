package bus

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
)

type entry struct {
	key string
	rev uint64
}

func (e entry) Bucket() string                  { return "rollouts" }
func (e entry) Key() string                     { return e.key }
func (e entry) Value() []byte                   { return []byte(fmt.Sprint(e.rev)) }
func (e entry) Revision() uint64                { return e.rev }
func (e entry) Created() time.Time              { return time.Time{} }
func (e entry) Delta() uint64                   { return 0 }
func (e entry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }

// newest takes the updates waiting and keeps each key's last, in the order
// the keys first came; it stops at an empty or closed channel and after
// maxTaken updates.
func TestNewestKeepsEachKeysLastUpdate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waiting []jetstream.KeyValueEntry
		close   bool
		want    []string
	}{
		{"nothing waiting", nil, false, []string{"a@1"}},
		{"newer revisions of the same key", []jetstream.KeyValueEntry{entry{"a", 2}, entry{"a", 3}}, false, []string{"a@3"}},
		{"two keys interleaved", []jetstream.KeyValueEntry{entry{"b", 2}, entry{"a", 3}, nil, entry{"b", 4}, entry{"c", 5}},
			false, []string{"a@3", "b@4", "c@5"}},
		{"a closed watch", []jetstream.KeyValueEntry{entry{"a", 2}}, true, []string{"a@2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			more := make(chan jetstream.KeyValueEntry, len(tc.waiting))
			for _, e := range tc.waiting {
				more <- e
			}
			if tc.close {
				close(more)
			}
			var got []string
			for _, e := range newest(entry{"a", 1}, more) {
				got = append(got, fmt.Sprintf("%s@%d", e.Key(), e.Revision()))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("newest (-want +got):\n%s", diff)
			}
			if tc.close {
				if _, ok := <-more; ok {
					t.Errorf("the closed watch's channel gave an update")
				}
			}
		})
	}
	more := make(chan jetstream.KeyValueEntry, 2*maxTaken)
	for i := range 2 * maxTaken {
		more <- entry{"a", uint64(i + 2)}
	}
	got := newest(entry{"a", 1}, more)
	if len(got) != 1 || got[0].Revision() != maxTaken+1 || len(more) != maxTaken {
		t.Errorf("newest of a long stream: %v, %d left waiting; want revision %d, %d left", got, len(more), maxTaken+1, maxTaken)
	}
}
