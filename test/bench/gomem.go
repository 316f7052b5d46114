package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// goMemory is where a Go process's memory goes, from the Go collector of
// its /metrics (runtime.MemStats).
type goMemory struct {
	HeapInUseMiB float64 `json:"heapInUseMiB"`
	// HeapIdleMiB is heap the runtime holds but has not returned to the
	// kernel (idle minus released): resident, not in use.
	HeapIdleMiB float64 `json:"heapIdleNotReleasedMiB"`
	StackMiB    float64 `json:"stackMiB"`
	SysMiB      float64 `json:"goSysMiB"`
	HeapObjects float64 `json:"heapObjects"`
}

// scrapeGoMemory reads the go_memstats_* gauges of a /metrics endpoint.
func scrapeGoMemory(ctx context.Context, url string) (goMemory, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return goMemory{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return goMemory{}, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return goMemory{}, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parseGoMemory(resp.Body)
}

// parseGoMemory reads Prometheus text exposition for the Go collector's
// memory gauges.
func parseGoMemory(r io.Reader) (goMemory, error) {
	v := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "go_memstats_") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return goMemory{}, fmt.Errorf("metrics: %s: %w", name, err)
		}
		v[name] = f
	}
	if err := sc.Err(); err != nil {
		return goMemory{}, err
	}
	for _, k := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes",
		"go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes"} {
		if _, ok := v[k]; !ok {
			return goMemory{}, fmt.Errorf("metrics: no %s", k)
		}
	}
	const mib = 1 << 20
	return goMemory{HeapInUseMiB: v["go_memstats_heap_inuse_bytes"] / mib,
		HeapIdleMiB: (v["go_memstats_heap_idle_bytes"] - v["go_memstats_heap_released_bytes"]) / mib,
		StackMiB:    v["go_memstats_stack_inuse_bytes"] / mib, SysMiB: v["go_memstats_sys_bytes"] / mib,
		HeapObjects: v["go_memstats_heap_objects"]}, nil
}

// where says where a process's resident memory goes.
func (g goMemory) where(rss float64) string {
	return fmt.Sprintf("Go heap in use %.0f MiB (%.0f objects), heap idle not returned to the kernel %.0f MiB, stacks %.0f MiB; "+
		"the rest of the %.0f MiB resident (binary's pages, runtime) %.0f MiB",
		g.HeapInUseMiB, g.HeapObjects, g.HeapIdleMiB, g.StackMiB, rss, max(rss-g.HeapInUseMiB-g.HeapIdleMiB-g.StackMiB, 0))
}
