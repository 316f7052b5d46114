package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// OptedInName is the ConfigMap listing, by UID, the owners whose pods the
// functions may write: the parameter of the ValidatingAdmissionPolicy
// inplace-pod-writes (config/admission), so the API server itself refuses
// a function's write to a pod whose owner did not opt in.
const OptedInName = "inplace-opted-in"

// OptedIn keeps that ConfigMap. compute-spec, the only function that
// decides, adds the owners of the pods it plans and removes those of a
// workload that no longer opts in; nothing else writes it.
type OptedIn struct {
	Client    kubernetes.Interface
	Namespace string
	// Remember is how long an owner written is not written again; default
	// 10 minutes (a later write puts back an entry removed by hand).
	Remember time.Duration
	Log      *slog.Logger

	mu      sync.Mutex
	known   map[string]time.Time
	missing sync.Once
}

// Owners are the UIDs that make pods opted in: each pod's controller (a
// ReplicaSet, StatefulSet, DaemonSet), or the pod itself when it has none,
// with what they name ("ReplicaSet/shop/web-7d9f").
func Owners(pods []*corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, p := range pods {
		// compute-spec asks for every pod of a workload at each of its
		// inputs: one name per owner, not one per pod.
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			if _, ok := out[string(ref.UID)]; !ok {
				out[string(ref.UID)] = ref.Kind + "/" + p.Namespace + "/" + ref.Name
			}
			continue
		}
		out[string(p.UID)] = "Pod/" + p.Namespace + "/" + p.Name
	}
	return out
}

// Allow adds owners (UID → name), writing only those not written lately.
func (o *OptedIn) Allow(ctx context.Context, owners map[string]string) error {
	now := time.Now()
	data := map[string]any{}
	o.mu.Lock()
	for uid, name := range owners {
		if t, ok := o.known[uid]; !ok || now.Sub(t) > o.remember() {
			data[uid] = name
		}
	}
	o.mu.Unlock()
	if len(data) == 0 {
		return nil
	}
	if err := o.patch(ctx, data); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.known == nil {
		o.known = map[string]time.Time{}
	}
	for uid := range data {
		o.known[uid] = now
	}
	return nil
}

// Forget removes owners.
func (o *OptedIn) Forget(ctx context.Context, uids []string) error {
	if len(uids) == 0 {
		return nil
	}
	data := map[string]any{}
	sort.Strings(uids)
	for _, uid := range uids {
		if uid != "" {
			data[uid] = nil
		}
	}
	if err := o.patch(ctx, data); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, uid := range uids {
		delete(o.known, uid)
	}
	return nil
}

func (o *OptedIn) remember() time.Duration {
	if o.Remember <= 0 {
		return 10 * time.Minute
	}
	return o.Remember
}

// patch merges data into the ConfigMap's data (a null removes a key).
func (o *OptedIn) patch(ctx context.Context, data map[string]any) error {
	body, err := json.Marshal(map[string]any{"data": data})
	if err != nil {
		return err
	}
	_, err = o.Client.CoreV1().ConfigMaps(o.Namespace).Patch(ctx, OptedInName, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: "inplace-compute-spec"})
	if apierrors.IsNotFound(err) { // no admission policy installed: nothing to keep
		o.missing.Do(func() {
			if o.Log != nil {
				o.Log.Warn("no ConfigMap "+OptedInName+": the admission policy inplace-pod-writes is not installed", "namespace", o.Namespace)
			}
		})
		return nil
	}
	if err != nil {
		return fmt.Errorf("configmap %s/%s (opted-in owners): %w", o.Namespace, OptedInName, err)
	}
	return nil
}
