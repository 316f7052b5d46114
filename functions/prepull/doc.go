// Package prepull is the pre-pull function: upgrade.planned in,
// image.prepulled out (or upgrade.failed when the image cannot be pulled).
//
// It puts a plan's target images on the pod's node before patch-pod
// touches the pod, so the container is down only for a restart, not for a
// pull. It works through the Kubernetes API only: a short-lived pod in the
// pre-pull namespace, pinned to the node (spec.nodeName), running the
// target images with imagePullPolicy IfNotPresent, tolerating every taint.
// Its containers run nothing of those images (which may hold no shell and
// no /bin/true): a program of a few dozen bytes that exits 0 at once, from
// an immutable ConfigMap pre-pull keeps in that namespace (exit.go). The kubelet pulls; the pod's container
// statuses say how it went; the pod is always deleted afterwards.
//
// Nothing blocks: the first delivery creates the pod and answers "not
// yet"; each redelivery reads its status. At most PrepullPerNode pre-pull
// pods exist on one node: their names are per-node slots
// (inplace-prepull-<node hash>-<slot>), so the API server's name
// uniqueness enforces the bound across any number of replicas. Plans for
// the same node and images follow the same pod (found by its images label).
// Pods left behind by a crash are swept once older than 2 × PrepullTimeout.
//
// It never touches the planned pod, and it never creates namespaces: the
// pre-pull namespace must exist.
package prepull
