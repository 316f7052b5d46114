package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// defaultConfigNamespace is where config-inplace and the functions live.
const defaultConfigNamespace = "inplace-system"

// defaultKubeDeadline bounds a command's reads of the API server (discovery,
// GETs, LISTs) when --request-timeout is 0, kubectl's default, which sets
// no timeout on a request: a command fails within it, naming the server,
// instead of waiting for an unreachable one forever.
var defaultKubeDeadline = 30 * time.Second

// kubeFlags are the cluster flags of the operator's commands: kubectl's
// own, from k8s.io/cli-runtime (--kubeconfig, --context, --cluster, --user,
// --as, --as-group, --request-timeout, -n/--namespace, --server, --token,
// --insecure-skip-tls-verify, ...), and inplace's --config-namespace (its
// config-inplace ConfigMap).
type kubeFlags struct {
	config          *genericclioptions.ConfigFlags
	configNamespace string
}

// bind registers the flags on fs; nsUsage is the usage of -n/--namespace,
// which is left out when empty.
func (k *kubeFlags) bind(fs *pflag.FlagSet, nsUsage string) {
	k.config = genericclioptions.NewConfigFlags(true)
	if nsUsage == "" {
		k.config.Namespace = nil
	}
	k.config.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if c.Timeout == 0 {
			c.Timeout = defaultKubeDeadline
		}
		c.QPS, c.Burst, c.UserAgent = 50, 100, "inplace-cli"
		return c
	}
	k.config.AddFlags(fs)
	if nsUsage != "" {
		fs.Lookup("namespace").Usage = nsUsage
	}
	fs.Lookup("request-timeout").Usage = fmt.Sprintf("how long the command may wait for the API server, "+
		"each request and all of them (1s, 2m; 0: %s)", defaultKubeDeadline)
	fs.StringVar(&k.configNamespace, "config-namespace", defaultConfigNamespace, "namespace of inplace itself (its config-inplace ConfigMap)")
}

// namespace is -n, else the namespace of the kubeconfig's current context
// (in a pod: its own), else "default": kubectl's rule. explicit reports
// whether -n named it.
func (k *kubeFlags) namespace() (ns string, explicit bool, err error) {
	ns, explicit, err = k.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, fmt.Errorf("namespace from the kubeconfig: %w (name one with -n)", err)
	}
	return ns, explicit, nil
}

// explicitNamespace is the namespace -n named, "" without -n; it reads no
// kubeconfig.
func (k *kubeFlags) explicitNamespace() string {
	if k.config.Namespace == nil {
		return ""
	}
	return *k.config.Namespace
}

// kubeSession is a command's talk with the API server: the client, the
// server's address (errors name it) and the deadline of its reads.
type kubeSession struct {
	flags    *kubeFlags
	cfg      *rest.Config
	client   kubernetes.Interface
	deadline time.Duration
}

// session loads the kubeconfig (or the in-cluster config) with the flags.
func (k *kubeFlags) session() (*kubeSession, error) {
	cfg, err := k.config.ToRESTConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("kubernetes: no usable kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	client, err := kube.Client(cfg)
	if err != nil {
		return nil, err
	}
	return &kubeSession{flags: k, cfg: cfg, client: client, deadline: cfg.Timeout}, nil
}

// reads is ctx bounded by the session's deadline, for its reads.
func (s *kubeSession) reads(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.deadline)
}

// reach names the server in an error that did not come from it (it could
// not be reached, or did not answer in time); the server's own answers
// (NotFound, Forbidden) are returned as they are.
func (s *kubeSession) reach(err error) error {
	var status apierrors.APIStatus
	var netErr net.Error
	switch {
	case err == nil || errors.As(err, &status):
		return err
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("could not reach the API server %s within %s (--request-timeout): %w", s.cfg.Host, s.deadline, err)
	}
	return fmt.Errorf("could not reach the API server %s: %w", s.cfg.Host, err)
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// workloadKinds are the KIND/ prefixes of a workload argument, as kubectl spells them.
var workloadKinds = []string{"deployment/", "statefulset/", "daemonset/", "replicaset/", "pod/"}

// completeWorkload offers the KIND/ prefixes of a workload argument.
func completeWorkload(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return workloadKinds, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// watchConfig is the session's config for informers: their watches last
// minutes, so a request timeout applies only when --request-timeout set one.
func (s *kubeSession) watchConfig() *rest.Config {
	c := rest.CopyConfig(s.cfg)
	c.Timeout = 0
	if raw, err := s.flags.config.ToRawKubeConfigLoader().ClientConfig(); err == nil {
		c.Timeout = raw.Timeout
	}
	return c
}
