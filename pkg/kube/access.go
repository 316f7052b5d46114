package kube

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// MayWatchAll reports whether the client may list and watch every one of
// resources ("pods", "apps/replicasets", ...) in all namespaces, as an
// informer does: a function confined to a few namespaces (`inplace
// rbac-namespaced`) may not, and then reads live instead of waiting on an
// informer that never syncs.
func MayWatchAll(ctx context.Context, c kubernetes.Interface, resources ...string) (bool, error) {
	for _, r := range resources {
		group, resource := "", r
		if g, res, ok := strings.Cut(r, "/"); ok {
			group, resource = g, res
		}
		for _, verb := range []string{"list", "watch"} {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource}}}
			out, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return false, fmt.Errorf("may %s %s: %w", verb, r, err)
			}
			if !out.Status.Allowed {
				return false, nil
			}
		}
	}
	return true, nil
}
