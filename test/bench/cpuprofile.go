package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// profilesDir is where CPU profiles of the replicas are written during the
// scale runs (INPLACE_BENCH_PROFILES; the replicas serve them when the
// bench runs with INPLACE_PPROF=1); "" takes none.
func profilesDir() string { return os.Getenv("INPLACE_BENCH_PROFILES") }

// profileReplicas takes a CPU profile of every replica for d, written to
// dir as scale-<n>x-<i>.pprof; wait returns when all are written.
func (p *project) profileReplicas(ctx context.Context, dir string, d time.Duration, log *slog.Logger) (wait func()) {
	if dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	for i, addr := range p.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(dir, fmt.Sprintf("scale-%dx-%d.pprof", len(p.addrs), i))
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
			if err := fetchTo(ctx, url, path, d+30*time.Second); err != nil {
				log.Warn("CPU profile of a replica", "replica", i, "err", err)
			}
		}()
	}
	return wg.Wait
}

func fetchTo(ctx context.Context, url, path string, limit time.Duration) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// machineTicks is the busy and total time of every CPU so far, from the
// first line of /proc/stat (busy: all but idle and iowait).
func machineTicks() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, s := range f[1:] {
		n, _ := strconv.ParseInt(s, 10, 64)
		if i >= 8 { // guest times are counted in user already
			break
		}
		total += n
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return busy, total
}

// busySince is the fraction of the machine's CPU time that was busy since
// a reading of machineTicks (every process on it, not only the bench's).
func busySince(busy, total int64) float64 {
	b, t := machineTicks()
	if t <= total {
		return 0
	}
	return float64(b-busy) / float64(t-total)
}
