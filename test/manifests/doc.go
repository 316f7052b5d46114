// Package manifests renders and checks the Kubernetes and Knative
// manifests under config/: every kustomization renders with kustomize (the
// sigs.k8s.io/kustomize/api library, as `kubectl kustomize` does), every
// core object is accepted by a real kube-apiserver with a server-side
// dry-run, every Knative object decodes strictly into Knative's Go types
// and passes their Validate (and a dry-run against Knative's CRDs), and
// each function, run under its own ServiceAccount from config/rbac, does
// its part of a rollout and is refused anything else.
//
// The package itself only renders (Render, Kustomizations); the checks
// are its tests. `make render` (render.sh) writes every overlay to
// dist/manifests through the render command.
package manifests
