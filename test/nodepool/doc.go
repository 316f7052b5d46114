// Package nodepool holds what the test world's pools of node processes
// share (test/hollow's hollow nodes, test/realnode's real nodes): the real
// kube-scheduler process, waiting until the nodes are Ready and
// schedulable, and deleting their Node objects when they stop.
package nodepool
