package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type kubeClient = kubernetes.Interface

var getOptions = metav1.GetOptions{}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// defaultConfigNamespace is where config-inplace and the functions live.
const defaultConfigNamespace = "inplace-system"

// kubeFlags are the cluster flags of the operator's commands, with
// kubectl's meaning: --kubeconfig, -n/--namespace the namespace of the
// workloads (default: the kubeconfig context's, as kubectl), and
// --config-namespace the project's own (config-inplace).
type kubeFlags struct {
	kubeconfig      string
	namespace       string
	configNamespace string
}

// bind registers --kubeconfig, --config-namespace and, when nsUsage is set,
// -n/--namespace with that usage.
func (k *kubeFlags) bind(fs *pflag.FlagSet, nsUsage string) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&k.configNamespace, "config-namespace", defaultConfigNamespace, "namespace of inplace itself (its config-inplace ConfigMap)")
	if nsUsage != "" {
		fs.StringVarP(&k.namespace, "namespace", "n", "", nsUsage)
	}
}

// workloadNamespace is -n, else the namespace of the kubeconfig's current
// context (in a pod: its own), else "default": kubectl's rule.
func (k *kubeFlags) workloadNamespace() (string, error) {
	if k.namespace != "" {
		return k.namespace, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.kubeconfig != "" {
		rules.ExplicitPath = k.kubeconfig
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil {
		return "", fmt.Errorf("namespace from the kubeconfig: %w (name one with -n)", err)
	}
	return ns, nil
}

// workloadKinds are the KIND/ prefixes of a workload argument, as kubectl spells them.
var workloadKinds = []string{"deployment/", "statefulset/", "daemonset/", "replicaset/", "pod/"}

// completeWorkload offers the KIND/ prefixes of a workload argument.
func completeWorkload(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return workloadKinds, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
