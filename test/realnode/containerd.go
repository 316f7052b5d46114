package realnode

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/inplace-dev/inplace/test/proc"
)

// containerdConfig is a node's containerd configuration (version 2, for
// containerd 1.6): its own root, state, socket and runc root; the CRI
// plugin with the settings this machine kind needs (research/real-node.md):
// restrict_oom_score_adj (root lacks CAP_SYS_RESOURCE, so runc cannot lower
// oom_score_adj), no AppArmor, runc v2 on cgroupfs, overlayfs, pod network
// namespaces under the state dir, the CNI plugins of /usr/lib/cni with a
// config dir of its own, registries from certs.d and the sandbox image.
// Plugins that would touch paths outside the node's directory (opt) or
// probe absent kernel features are disabled.
func containerdConfig(nd *node, sandboxImage string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return `version = 2
root = ` + q(nd.path("containerd", "root")) + `
state = ` + q(nd.path("containerd", "state")) + `
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = ` + q(nd.socket()) + `

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ` + q(sandboxImage) + `
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ` + q(nd.path("runc")) + `
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = ` + q(nd.path("cni", "net.d")) + `
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ` + q(nd.path("certs.d")) + `
`
}

// hostsTOML points containerd at a plain-HTTP registry: pulls of
// 127.0.0.1:<port>/… go to the forward of that port on the host bridge.
func hostsTOML(forwardAddr string) string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"http://"+forwardAddr, "http://"+forwardAddr)
}

// cniConfig is a node's pod network: the bridge plugin on cni0 in the
// node's netns, the node's /24 from host-local (its data in the node's
// directory), the bridge the pods' gateway, no masquerade (every pod and
// host address is routed), hairpin mode so a pod reaches itself through a
// Service. containerd adds the loopback plugin itself.
func cniConfig(name, podCIDR, ipamDir string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"cniVersion": "0.4.0",
		"name":       name,
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      "cni0",
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam": map[string]any{
				"type":    "host-local",
				"ranges":  [][]map[string]string{{{"subnet": podCIDR}}},
				"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				"dataDir": ipamDir,
			},
		}},
	}, "", "  ")
}

// startContainerd writes the node's containerd, registry and CNI
// configuration and runs containerd in the node's network namespace,
// returning once its socket answers.
func (n *Nodes) startContainerd(ctx context.Context, nd *node) error {
	files := map[string][]byte{
		nd.path("containerd.toml"): []byte(containerdConfig(nd, n.opts.SandboxImage)),
	}
	for reg, f := range n.forwards {
		files[nd.path("certs.d", reg, "hosts.toml")] = []byte(hostsTOML(f.Addr()))
	}
	cni, err := cniConfig(nd.cniNetwork, nd.podCIDR, nd.path("cni", "ipam"))
	if err != nil {
		return err
	}
	files[nd.path("cni", "net.d", "10-inplace.conflist")] = cni
	if err := writeFiles(files); err != nil {
		return err
	}
	p, err := n.startIn(nd, "containerd", "/usr/bin/containerd", "--config", nd.path("containerd.toml"))
	if err != nil {
		return err
	}
	nd.containerd = p
	return waitSocket(ctx, p, nd.socket())
}

// waitSocket waits until the unix socket accepts a connection.
func waitSocket(ctx context.Context, p *proc.Process, sock string) error {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if err := p.ErrExited(); err != nil {
			return false, err
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s: %w", sock, err)
	}
	return nil
}

func writeFiles(files map[string][]byte) error {
	for path, b := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
