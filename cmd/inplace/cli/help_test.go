package cli

import (
	"strings"
	"testing"
)

// Each command's --help lists the flags it reads, and no default that
// depends on the machine it runs on.
func TestHelpShowsOnlyItsOwnFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd           []string
		want, notWant []string
	}{
		{[]string{"nats", "setup"}, []string{"--nats-url", "--nats-credentials", "--stream", "--replicas", "--ack-wait"},
			[]string{"--functions", "--http-addr", "--kubeconfig", "--watch-pods", "--hooks-config", "--workers", "--nats-data-dir", "--log-level"}},
		{[]string{"approve"}, []string{"--by", "(default: user@host of this machine)"}, []string{defaultApprover()}},
		{[]string{"reject"}, []string{"--by"}, []string{defaultApprover()}},
		{[]string{"status"}, []string{"--nats-url", "--kubeconfig", "--context"}, []string{"--stream"}},
	} {
		out, err := runRoot(t, append(tc.cmd, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("inplace %s --help lacks %q:\n%s", strings.Join(tc.cmd, " "), w, out)
			}
		}
		for _, nw := range tc.notWant {
			if strings.Contains(out, nw) {
				t.Errorf("inplace %s --help shows %q:\n%s", strings.Join(tc.cmd, " "), nw, out)
			}
		}
	}
}
