package rollout

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkRecordWrite is one outcome's write of a 1,000-pod record as
// compute-spec makes it, step by step: decode, record, plan, settle,
// encode. The decode and encode are O(pods) and dominate; that is why
// outcomes queued for one record share a write (computespec commits).
func BenchmarkRecordWrite(b *testing.B) {
	const n = 1000
	w := newWorld(n, 3)
	cands := w.cands()
	r := Begin(nil, "u-1", wl, push, Options{Budget: n}, t0)
	Plan(r, cands, "push", false, t0)
	raw, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("record of %d pods: %d bytes", n, len(raw))
	decode := func(b *testing.B) *Rollout {
		var got Rollout
		if err := json.Unmarshal(raw, &got); err != nil {
			b.Fatal(err)
		}
		return &got
	}
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			decode(b)
		}
	})
	b.Run("record+plan+settle", func(b *testing.B) {
		got := decode(b)
		i := 0
		for b.Loop() {
			name := cands[i%n].Pod.Name
			i++
			if got.Pods[name].State != InFlight {
				got = decode(b)
			}
			Record(got, "dev.inplace.upgrade.succeeded", outcome(got, name), "in", t0)
			Plan(got, cands, "in", false, t0)
			Settle(got, "in", t0)
		}
	})
	b.Run("encode", func(b *testing.B) {
		got := decode(b)
		for b.Loop() {
			if _, err := json.Marshal(got); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRecordClone is the copy a writer makes of a shared 1,000-pod
// record instead of decoding it (compare BenchmarkRecordWrite/decode).
func BenchmarkRecordClone(b *testing.B) {
	const n = 1000
	r := Begin(nil, "u-1", wl, push, Options{Budget: n}, t0)
	Plan(r, newWorld(n, 3).cands(), "push", false, t0)
	for b.Loop() {
		r.Clone()
	}
}

// BenchmarkRecordEncode is one write's encoding of a record of n pods
// after one pod's outcome: json.Marshal of the whole record, and the
// Encoder, which encodes the changed pod again and reuses the others.
func BenchmarkRecordEncode(b *testing.B) {
	for _, n := range []int{100, 1000} {
		w := newWorld(n, 3)
		r := Begin(nil, "u-1", wl, push, Options{Budget: n}, t0)
		Plan(r, w.cands(), "push", false, t0)
		names := make([]string, 0, n)
		for name := range r.Pods {
			names = append(names, name)
		}
		outcomes := func(b *testing.B, encode func() error) {
			for i := 0; b.Loop(); i++ {
				p := r.Pods[names[i%n]]
				p.State, p.Reason = Succeeded, fmt.Sprint("outcome ", i) // a pod changed, as by Record
				if err := encode(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(fmt.Sprintf("pods=%d/marshal", n), func(b *testing.B) {
			outcomes(b, func() error { _, err := json.Marshal(r); return err })
		})
		b.Run(fmt.Sprintf("pods=%d/encoder", n), func(b *testing.B) {
			var e Encoder
			outcomes(b, func() error { _, err := e.Encode("k", r); return err })
		})
	}
}
