// Package watcher is the pod watcher of `inplace run`: it turns changes of
// pods with an in-place upgrade in flight into events for verify, and opens
// the inplace.dev/ready gate of new pods.
//
// From a pod informer (kube.Cache's, or any) it publishes pod.updated for
// every observed state of a pod whose inplace.dev/state phase is active,
// and container.restarted when one of its containers' containerID or
// restartCount moves. Event ids are derived from the pod state
// (events.PodStateKey: UID and resourceVersion), the type and the
// container, so a resync or a relist republishes identical ids, which the
// stream's dedup window drops; pod.updated ids are the same as those the
// ApiServerSource adapter derives, so both sources may run at once.
//
// A pod that declares the gate but has no condition and no upgrade in
// flight gets the condition True (OpenKruise's Refresh does the same):
// without it a new pod of an opted-in workload would never become Ready.
//
// Work goes through a rate-limited workqueue: a failed publish or write is
// retried with back-off, never dropped. The watcher never patches images
// or the state annotation.
package watcher
