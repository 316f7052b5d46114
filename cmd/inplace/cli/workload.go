package cli

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// managedKinds are the kinds a workload argument may name.
var managedKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "", Kind: "Pod"}:             true,
}

const kindsWanted = "deployment/NAME, statefulset/NAME, daemonset/NAME, replicaset/NAME or pod/NAME (or kubectl's short names: deploy, sts, ds, rs, po)"

// workload reads KIND/NAME as kubectl does: the kind is any name the API
// server's discovery gives the resource (deploy, deployment, deployments,
// deployment.apps, Deployment, sts, ds, rs, po, ...), through cli-runtime's
// REST mapper and shortcut expander; the namespace is -n or the context's.
func (s *kubeSession) workload(ctx context.Context, arg string) (events.ObjectRef, error) {
	res, name, ok := strings.Cut(arg, "/")
	if !ok || res == "" || name == "" || strings.Contains(name, "/") {
		return events.ObjectRef{}, fmt.Errorf("%q: want %s", arg, kindsWanted)
	}
	ns, _, err := s.flags.namespace()
	if err != nil {
		return events.ObjectRef{}, err
	}
	gk, err := s.kindOf(ctx, res)
	if meta.IsNoMatchError(err) {
		return events.ObjectRef{}, fmt.Errorf("%q: the server %s has no resource type %q; want %s", arg, s.cfg.Host, res, kindsWanted)
	}
	if err != nil {
		return events.ObjectRef{}, s.reach(err)
	}
	if !managedKinds[gk] {
		return events.ObjectRef{}, fmt.Errorf("%q: inplace does not manage a %s; want %s", arg, gk, kindsWanted)
	}
	return events.ObjectRef{Kind: gk.Kind, Namespace: ns, Name: name}, nil
}

// kindOf maps a resource or kind argument to its group and kind, within
// the session's deadline: discovery takes no context, so it runs aside and
// is given up on when ctx ends (its requests end by themselves within
// --request-timeout).
func (s *kubeSession) kindOf(ctx context.Context, arg string) (schema.GroupKind, error) {
	type result struct {
		gk  schema.GroupKind
		err error
	}
	done := make(chan result, 1)
	go func() {
		gk, err := s.mapKind(arg)
		done <- result{gk, err}
	}()
	select {
	case r := <-done:
		return r.gk, r.err
	case <-ctx.Done():
		return schema.GroupKind{}, ctx.Err()
	}
}

// mapKind is kubectl's resource.Builder mapping: the argument as a
// resource (deploy, deployments, deployment.apps, deployments.v1.apps),
// else as a kind (Deployment, Deployment.apps).
func (s *kubeSession) mapKind(arg string) (schema.GroupKind, error) {
	mapper, err := s.flags.config.ToRESTMapper()
	if err != nil {
		return schema.GroupKind{}, err
	}
	fullGVR, gr := schema.ParseResourceArg(arg)
	if fullGVR != nil {
		if gvk, err := mapper.KindFor(*fullGVR); err == nil {
			return gvk.GroupKind(), nil
		}
	}
	gvk, err := mapper.KindFor(gr.WithVersion(""))
	if err == nil {
		return gvk.GroupKind(), nil
	}
	if !meta.IsNoMatchError(err) {
		return schema.GroupKind{}, err
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK != nil {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m.GroupVersionKind.GroupKind(), nil
		}
	}
	m, err := mapper.RESTMapping(gk)
	if err != nil {
		return schema.GroupKind{}, err
	}
	return m.GroupVersionKind.GroupKind(), nil
}

// snapshot reads one workload and its pods (GET, LIST by its selector in
// its namespace) within the session's deadline.
func (s *kubeSession) snapshot(ctx context.Context, ref events.ObjectRef) (*kube.Snapshot, error) {
	snap, err := kube.NewSnapshot(s.client)
	if err != nil {
		return nil, err
	}
	if err := snap.ReadWorkload(ctx, ref); err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%s not found", ref)
		}
		return nil, s.reach(err)
	}
	return snap, nil
}

// namespaceSnapshot lists the pods and workloads of ns ("" for every
// namespace) within the session's deadline.
func (s *kubeSession) namespaceSnapshot(ctx context.Context, ns string) (*kube.Snapshot, error) {
	snap, err := kube.NewSnapshot(s.client)
	if err != nil {
		return nil, err
	}
	if err := snap.ReadNamespace(ctx, ns); err != nil {
		return nil, s.reach(err)
	}
	return snap, nil
}

// resolve is workload within the session's deadline.
func (s *kubeSession) resolve(ctx context.Context, arg string) (events.ObjectRef, error) {
	ctx, cancel := s.reads(ctx)
	defer cancel()
	return s.workload(ctx, arg)
}

// readTarget resolves KIND/NAME and reads the workload and its pods within
// the deadline, refusing containers its pods do not have.
func readTarget(ctx context.Context, k *kubeFlags, arg string, containers []string) (events.ObjectRef, error) {
	s, err := k.session()
	if err != nil {
		return events.ObjectRef{}, err
	}
	ctx, cancel := s.reads(ctx)
	defer cancel()
	ref, err := s.workload(ctx, arg)
	if err != nil {
		return events.ObjectRef{}, err
	}
	snap, err := s.snapshot(ctx, ref)
	if err != nil {
		return events.ObjectRef{}, err
	}
	w, ok, err := snap.Get(ref)
	if err != nil || !ok {
		return events.ObjectRef{}, fmt.Errorf("%s not found", ref)
	}
	if err := checkContainers(w, containers); err != nil {
		return events.ObjectRef{}, err
	}
	return ref, nil
}
