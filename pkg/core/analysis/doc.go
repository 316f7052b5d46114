// Package analysis is the pure core of canary analysis: what a workload's
// inplace.dev/analysis annotation asks for (steps: a canary of N pods or a
// percentage, a bake time, PromQL queries with a threshold, optionally
// against the pods not yet moved as a baseline, how many measurements at
// what interval, how many failures are tolerated; or an approval), the
// queries templated with the rollout's namespace, workload, pods and
// versions, and the verdict of a step from its measurements.
//
// Its caller reads the annotation (and the ConfigMap it may name), renders
// the queries of a step with Render, runs them through the Prometheus
// adapter (pkg/inputs/prometheus), keeps the measurements in the rollout
// record and asks Evaluate what they say and when to measure next. Nothing
// here queries Prometheus, reads the cluster or keeps time: every function
// takes what it decides from.
//
// A verdict is never Passed on missing data: a measurement that failed,
// returned nothing or returned NaN is inconclusive, never a success.
package analysis
