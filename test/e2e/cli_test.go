package e2e_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A workload argument takes every name kubectl takes for its kind, as the
// real API server's discovery gives them (singular, plural, short name,
// with the group, the Kind), and a kind inplace does not manage, or one the
// server does not have, is refused with the reason.
func TestWorkloadKindAliases(t *testing.T) {
	e := newEnv(t)
	e.push("app", "1.0.0")
	for _, k := range []kinded{{"Deployment", "web", 1}, {"StatefulSet", "db", 1}, {"DaemonSet", "agent", 0}} {
		e.create(k, e.ref("app", "1.0.0"))
	}
	sets, err := e.w.Client().AppsV1().ReplicaSets(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(sets.Items) != 1 {
		t.Fatalf("the ReplicaSet of web: %v, %d", err, len(sets.Items))
	}
	rs := sets.Items[0].Name
	for _, tc := range []struct {
		workload string
		name     string
		aliases  []string
	}{
		{"Deployment", "web", []string{"deploy", "deployment", "deployments", "deployment.apps", "deployments.apps",
			"deployments.v1.apps", "Deployment", "Deployment.apps"}},
		{"StatefulSet", "db", []string{"sts", "statefulset", "statefulsets", "statefulset.apps", "StatefulSet"}},
		{"DaemonSet", "agent", []string{"ds", "daemonset", "daemonsets", "daemonset.apps", "DaemonSet"}},
		{"ReplicaSet", rs, []string{"rs", "replicaset", "replicasets", "replicaset.apps", "ReplicaSet"}},
		{"Pod", "db-0", []string{"po", "pod", "pods", "Pod"}},
	} {
		want := tc.workload + "/" + e.ns + "/" + tc.name
		for _, alias := range tc.aliases {
			out, err := e.inplace("plan", alias+"/"+tc.name, "-n", e.ns, "--image", e.ref("app", "1.1.0"),
				"--kubeconfig", e.w.Cluster.Kubeconfig())
			if err != nil || !strings.HasPrefix(out, want+"\n") {
				t.Errorf("plan %s/%s: %v\n%s\nwant the plan of %s", alias, tc.name, err, out, want)
			}
		}
	}
	for arg, want := range map[string]string{
		"cronjob/web":  `"cronjob/web": inplace does not manage a CronJob.batch`,
		"nothing/web":  `"nothing/web": the server ` + e.w.Cluster.Server() + ` has no resource type "nothing"`,
		"deploy/":      `"deploy/": want deployment/NAME`,
		"deploy/a/b":   `"deploy/a/b": want deployment/NAME`,
		"services/web": `"services/web": inplace does not manage a Service`,
	} {
		out, err := e.inplace("plan", arg, "-n", e.ns, "--image", e.ref("app", "1.1.0"), "--kubeconfig", e.w.Cluster.Kubeconfig())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("plan %s: %v\n%s\nwant %q", arg, err, out, want)
		}
	}

	// restart and resize read the workload first: a container it does not
	// have is refused, naming those it has, before anything is published.
	for _, args := range [][]string{
		{"restart", "deploy/web", "-c", "app,nosuch"},
		{"resize", "sts/db", "-c", "nosuch", "--cpu", "1"},
		{"restart", "po/db-0", "-c", "nosuch"},
	} {
		out, err := e.inplace(append(args, append([]string{"-n", e.ns}, e.conn()...)...)...)
		if err == nil || !strings.Contains(err.Error(), "-c nosuch: ") || !strings.Contains(err.Error(), "has no container nosuch (it has app)") {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := e.inplace(append([]string{"restart", "daemonsets.apps/agent", "-c", "app", "-n", e.ns, "--timeout", "2m"}, e.conn()...)...)
	if err != nil || !strings.Contains(out, "DaemonSet/"+e.ns+"/agent containers app") {
		t.Errorf("restart daemonsets.apps/agent -c app: %v\n%s", err, out)
	}
}

// linesWith are the lines of out that start with prefix and contain s.
func linesWith(out, prefix, s string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, s) {
			got = append(got, l)
		}
	}
	return got
}
