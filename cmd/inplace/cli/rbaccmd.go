package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// namespacedWriters are the functions that write pods: their rights can
// end at the namespaces that opted in.
var namespacedWriters = []string{"patch-pod", "verify"}

func newRBACCmd() *cobra.Command {
	var system string
	cmd := &cobra.Command{
		Use:   "rbac-namespaced NAMESPACE...",
		Short: "Print RoleBindings that give the pod-writing functions their rights in these namespaces only",
		Long: `rbac-namespaced prints, for each namespace named, RoleBindings of the
ClusterRoles of patch-pod and verify (config/rbac) to their ServiceAccounts:
with them instead of the ClusterRoleBindings, the functions that write pods
may do so only in the namespaces whose workloads opted in:

  inplace rbac-namespaced shop payments | kubectl apply -f -
  kubectl delete clusterrolebinding inplace-patch-pod inplace-verify

compute-spec keeps its cluster-wide read (it finds the workloads a push
concerns), and the admission policy (config/admission) still bounds what
each function may change on a pod.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeNamespacedBindings(cmd.OutOrStdout(), system, args)
		},
	}
	cmd.Flags().StringVar(&system, "system-namespace", "inplace-system", "namespace of the functions' ServiceAccounts")
	return cmd
}

// writeNamespacedBindings writes the RoleBindings as a YAML stream.
func writeNamespacedBindings(w io.Writer, system string, namespaces []string) error {
	for _, ns := range namespaces {
		for _, fn := range namespacedWriters {
			name := "inplace-" + fn
			rb := rbacv1.RoleBinding{
				TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
					"app.kubernetes.io/part-of": "inplace", "app.kubernetes.io/component": fn}},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: system}},
			}
			b, err := yaml.Marshal(rb)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
				return err
			}
		}
	}
	return nil
}
