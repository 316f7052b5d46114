package main

import (
	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
)

type v1Pod = v1.Pod

// machine is kubemark's fake cAdvisor with the capacity the test world's
// nodes have (kubemark's has 1 CPU and 3840Mi).
type machine struct {
	cadvisortest.Fake
	name   string
	cores  int
	memory uint64
}

// MachineInfo implements cadvisor.Interface.
func (m *machine) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	info, err := m.Fake.MachineInfo()
	if err != nil {
		return nil, err
	}
	info.NumCores, info.MemoryCapacity = m.cores, m.memory
	return info, nil
}
