package reconfig

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CanWatchSecrets asks the API server whether this identity may list and
// watch Secrets in every namespace (config/optional/reconfig-secrets.yaml
// grants it; nothing does by default).
func CanWatchSecrets(ctx context.Context, client kubernetes.Interface) bool {
	for _, verb := range []string{"list", "watch"} {
		r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: verb, Resource: "secrets"}}}, metav1.CreateOptions{})
		if err != nil || !r.Status.Allowed {
			return false
		}
	}
	return true
}
