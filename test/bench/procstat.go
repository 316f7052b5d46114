package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times
// (100 on every Linux the benchmark runs on).
const clockTick = 100

// cpuTime is the CPU a process has used so far (user + system), from
// /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line; the command name (field 2) may hold spaces.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // state is f[0], so utime is f[11]
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTick, nil
}

// memory is a process's resident set now and at its peak, and what the
// resident set is made of now, in bytes: anonymous pages (the Go heap,
// stacks and runtime), file-backed pages (the binary's pages it touched)
// and shared memory.
type memory struct{ RSS, HWM, Anon, File, Shmem int64 }

// memoryOf reads VmRSS, VmHWM and RssAnon, RssFile, RssShmem from
// /proc/<pid>/status.
func memoryOf(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	return parseStatusMemory(b)
}

func parseStatusMemory(b []byte) (memory, error) {
	var m memory
	fields := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.HWM, "RssAnon": &m.Anon, "RssFile": &m.File, "RssShmem": &m.Shmem}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return memory{}, fmt.Errorf("status: %s: %q", k, v)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("status: %s: %w", k, err)
		}
		*dst = n << 10
	}
	if m.RSS == 0 || m.HWM == 0 {
		return memory{}, fmt.Errorf("status: no VmRSS/VmHWM")
	}
	return m, nil
}

// fileRSS is the resident memory of each file a process maps, in bytes,
// from /proc/<pid>/smaps (the binary's text and read-only data, the
// libraries): what its RssFile is made of.
func fileRSS(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	return parseSmapsFiles(b), nil
}

func parseSmapsFiles(b []byte) map[string]int64 {
	out := map[string]int64{}
	path := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			path = "" // a mapping's header: range perms offset dev inode [path]
			if len(f) >= 6 && f[4] != "0" {
				path = f[5]
			}
		case len(f) == 3 && f[0] == "Rss:" && path != "":
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil && n > 0 {
				out[path] += n << 10
			}
		}
	}
	return out
}

// loadAverage is the 1, 5 and 15 minute load averages.
func loadAverage() [3]float64 {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		l[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return l
}

// machine describes where the benchmark ran.
type machine struct {
	CPUs      int        `json:"cpus"`
	Model     string     `json:"cpuModel"`
	MemoryGiB float64    `json:"memoryGiB"`
	Go        string     `json:"go"`
	LoadStart [3]float64 `json:"loadAverageAtStart"`
	LoadEnd   [3]float64 `json:"loadAverageAtEnd"`
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadStart: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %g kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	return m
}

// cpuMeter reads the CPU time of named processes, before and after a run.
type cpuMeter map[string][]int // group name → pids

// read returns each group's CPU time so far; a process gone is skipped.
func (c cpuMeter) read() map[string]time.Duration {
	out := map[string]time.Duration{}
	for g, pids := range c {
		for _, pid := range pids {
			if d, err := cpuTime(pid); err == nil {
				out[g] += d
			}
		}
	}
	return out
}

// cpuSince is each group's CPU used since before, in milliseconds per pod.
func cpuSince(before, after map[string]time.Duration, pods int) map[string]float64 {
	out := map[string]float64{}
	for g, d := range after {
		out[g] = float64((d - before[g]).Milliseconds()) / float64(max(pods, 1))
	}
	return out
}
