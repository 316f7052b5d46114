// Package bench measures the project on the test world and prints figures
// (go test -bench): an in-place rollout against the Deployment controller's
// own rolling update (recreate) of the same pods, with API writes per pod
// read from the kube-apiserver's metrics. `make bench` runs it.
package bench
