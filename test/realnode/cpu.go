package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPU is what a container's cgroup says about its CPU: on cgroup v1
// cpu.shares and cpu.cfs_quota_us/cpu.cfs_period_us, on v2 cpu.weight and
// cpu.max (Shares is then 0, Weight set). QuotaUs is -1 without a limit.
type CPU struct {
	Shares, Weight    int64
	QuotaUs, PeriodUs int64
}

// ContainerCPU reads the CPU settings of a container's cgroup on the
// named node (containerID as the pod status gives it).
func (n *Nodes) ContainerCPU(node, podUID, containerID string) (CPU, error) {
	if unifiedCgroups() {
		dir, err := n.ContainerCgroup(node, podUID, containerID, "")
		if err != nil {
			return CPU{}, err
		}
		return readCPUv2(dir)
	}
	dir, err := n.ContainerCgroup(node, podUID, containerID, "cpu")
	if err != nil {
		return CPU{}, err
	}
	return readCPUv1(dir)
}

// CPUFor is what the kubelet (cgroupfs driver) writes for a container
// asking requestMilli and limitMilli (0: none) millicores, on the cgroup
// version this machine runs: shares = request×1024/1000 (at least 2), the
// quota limit×period/1000 over a 100 ms period, v2's weight converted
// from the shares.
func CPUFor(requestMilli, limitMilli int64) CPU {
	return cpuFor(requestMilli, limitMilli, unifiedCgroups())
}

func cpuFor(requestMilli, limitMilli int64, unified bool) CPU {
	shares := max(requestMilli*1024/1000, 2)
	c := CPU{Shares: shares, QuotaUs: -1, PeriodUs: 100000}
	if limitMilli > 0 {
		c.QuotaUs = max(limitMilli*c.PeriodUs/1000, 1000)
	}
	if unified {
		c.Weight, c.Shares = 1+((shares-2)*9999)/262142, 0
	}
	return c
}

func unifiedCgroups() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

func readCPUv1(dir string) (CPU, error) {
	var c CPU
	for name, dst := range map[string]*int64{"cpu.shares": &c.Shares, "cpu.cfs_quota_us": &c.QuotaUs, "cpu.cfs_period_us": &c.PeriodUs} {
		v, err := readInt(filepath.Join(dir, name))
		if err != nil {
			return CPU{}, err
		}
		*dst = v
	}
	return c, nil
}

func readCPUv2(dir string) (CPU, error) {
	var c CPU
	var err error
	if c.Weight, err = readInt(filepath.Join(dir, "cpu.weight")); err != nil {
		return CPU{}, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
	if err != nil {
		return CPU{}, fmt.Errorf("container cpu: %w", err)
	}
	quota, period, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok {
		return CPU{}, fmt.Errorf("container cpu: %s/cpu.max: %q is not \"quota period\"", dir, b)
	}
	c.QuotaUs = -1
	if quota != "max" {
		if c.QuotaUs, err = strconv.ParseInt(quota, 10, 64); err != nil {
			return CPU{}, fmt.Errorf("container cpu: %s/cpu.max: %w", dir, err)
		}
	}
	if c.PeriodUs, err = strconv.ParseInt(period, 10, 64); err != nil {
		return CPU{}, fmt.Errorf("container cpu: %s/cpu.max: %w", dir, err)
	}
	return c, nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("container cpu: %w", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("container cpu: %s: %w", path, err)
	}
	return v, nil
}
