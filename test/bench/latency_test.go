package main

import (
	"testing"
	"time"
)

func TestFirstPatch(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	reqs := []request{
		{Verb: "patch", UserAgent: "inplace", Namespace: "latency", Resource: "pods", Name: "l01-abc-x", Received: ms(-5)}, // before the webhook
		{Verb: "patch", UserAgent: "inplace", Namespace: "latency", Resource: "pods", Name: "l01-abc-x", Subresource: "status", Received: ms(20)},
		{Verb: "get", UserAgent: "inplace", Namespace: "latency", Resource: "pods", Name: "l01-abc-x", Received: ms(25)},
		{Verb: "patch", UserAgent: benchUserAgent, Namespace: "latency", Resource: "pods", Name: "l01-abc-x", Received: ms(30)},
		{Verb: "patch", UserAgent: "inplace", Namespace: "latency", Resource: "pods", Name: "l010-abc-x", Received: ms(35)},
		{Verb: "patch", UserAgent: "inplace", Namespace: "latency", Resource: "pods", Name: "l01-abc-x", Received: ms(42)},
		{Verb: "patch", UserAgent: "inplace", Namespace: "latency", Resource: "pods", Name: "l01-abc-x", Received: ms(90)},
	}
	got, ok := firstPatch(reqs, "latency", "l01-", t0)
	if !ok || !got.Equal(ms(42)) {
		t.Errorf("firstPatch = %v, %v; want 42ms after the webhook", got.Sub(t0), ok)
	}
	if _, ok := firstPatch(reqs, "latency", "l02-", t0); ok {
		t.Error("firstPatch of a pod never patched: want none")
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct{ q, want float64 }{{50, 5}, {99, 10}, {10, 1}, {100, 10}} {
		if got := percentile(xs, tc.q); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.q, got, tc.want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("p50 of nothing: want 0")
	}
}
