package faults

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/proc"
	"github.com/inplace-dev/inplace/test/world"
)

// TestReplicasShareAndSurviveAKill runs two `inplace run` processes, each
// running every function, against a 3-node JetStream cluster (R3 stream and
// KV): they share the work through the durable consumers, one pod at a time
// across them (bus.Leases). One is SIGKILLed mid-rollout; the other
// finishes it: every pod moves exactly once and the rollout completes once.
func TestReplicasShareAndSurviveAKill(t *testing.T) {
	n := max(pods, 8)
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			e := newEnv(t, 3)
			e.buckets()
			e.startChild()
			survivor := e.startReplica()
			e.deploy(int32(n), map[string]string{"inplace.dev/max-unavailable": "2", "inplace.dev/grace-seconds": "1"})
			base := e.pods()
			p := e.push("1.1.0")
			e.waitPhase(p, 2*time.Minute, func(r *rollout.Rollout) bool {
				c := r.Counts()
				return c.Succeeded >= 2 && c.Succeeded < n
			}, "the rollout under way")
			killed := e.child
			e.kill()
			t.Logf("killed %s mid-rollout: %s", killed.Name(), e.describe())
			e.done(p, 3*time.Minute)
			t.Logf("pods patched by the killed replica: %d, by the survivor: %d",
				count(killed.LogPath(), "pod patched"), count(survivor.LogPath(), "pod patched"))
			record(t, "2 replicas of every function, one SIGKILLed", "kills", 1, 1, n, e.check(base, []pushed{p}))
		})
	}
}

// buckets makes the KV buckets before the children start, so that two
// of them do not both create an R3 bucket while the cluster elects.
func (e *env) buckets() {
	e.t.Helper()
	var last error
	err := world.Eventually(e.t.Context(), time.Minute, "the buckets set up", func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, last = e.b.KV(ctx); last != nil {
			return false, nil
		}
		if _, last = e.b.Leases(ctx); last != nil {
			return false, nil
		}
		_, last = e.b.Failures(ctx)
		return last == nil, nil
	})
	if err != nil {
		e.t.Fatalf("%v: %v", err, last)
	}
}

// startReplica starts another `inplace run` beside the child, stopped at
// cleanup; its log tail joins the failure messages.
func (e *env) startReplica() *proc.Process {
	e.t.Helper()
	e.children++
	p, err := proc.Start(e.dir, fmt.Sprintf("inplace-%02d", e.children), os.Args[0], e.childArgs(), childEnv+"=1")
	if err != nil {
		e.t.Fatal(err)
	}
	e.replicas = append(e.replicas, p)
	e.t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}

// count is how many lines of the file at path contain s.
func count(path, s string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), s)
}
