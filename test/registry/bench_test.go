package registry

import (
	"fmt"
	"testing"
)

func benchRegistry(b *testing.B) *Registry {
	b.Helper()
	r, err := Start(b.Context(), Options{})
	if err != nil {
		b.Fatalf("Start: %v", err)
	}
	b.Cleanup(func() { _ = r.Close() })
	return r
}

func BenchmarkPush(b *testing.B) {
	for _, mb := range []int64{0, 1, 10} {
		b.Run(fmt.Sprintf("%dMiB", mb), func(b *testing.B) {
			r := benchRegistry(b)
			opts := []PushOption{}
			if mb > 0 {
				opts = append(opts, WithSizeMB(mb))
			}
			i := 0
			for b.Loop() {
				if _, err := r.Push(b.Context(), "bench", fmt.Sprintf("v%d", i), opts...); err != nil {
					b.Fatalf("Push: %v", err)
				}
				i++
			}
		})
	}
}

func BenchmarkResolve(b *testing.B) {
	r := benchRegistry(b)
	if _, err := r.Push(b.Context(), "bench", "v1"); err != nil {
		b.Fatalf("Push: %v", err)
	}
	ref := r.Host() + "/bench:v1"
	for b.Loop() {
		if _, err := r.Resolve(b.Context(), ref); err != nil {
			b.Fatalf("Resolve: %v", err)
		}
	}
}
