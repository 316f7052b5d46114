package busauth

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
)

// Account is the NATS account ServerConfig puts the identities in.
const Account = "INPLACE"

// KeyVar is the environment variable ServerConfig reads an identity's
// public key from when it is not given: INPLACE_NKEY_PATCH_POD.
func KeyVar(name string) string {
	return "INPLACE_NKEY_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// ServerConfig is the nats-server configuration of the identities, an
// entry of an accounts block (include it there): the account with
// JetStream and one nkey user per role with its permissions. Keys missing
// from keys are read from the environment (KeyVar), so one file serves
// every installation, its keys in a Secret.
func ServerConfig(cfg bus.Config, keys map[string]string) string {
	var b strings.Builder
	b.WriteString("# The identities of inplace (pkg/bus/busauth), an entry of an accounts block:\n")
	b.WriteString("# each function publishes only its outputs and consumes only its own\n")
	b.WriteString("# consumer. Written by `inplace nats credentials --server-config`; do not\n")
	b.WriteString("# edit by hand.\n")
	fmt.Fprintf(&b, "%s {\n  jetstream: enabled\n  users: [\n", Account)
	for _, r := range Roles() {
		key := keys[r.Name]
		if key == "" {
			key = "$" + KeyVar(r.Name)
		}
		p := Permissions(cfg, r)
		fmt.Fprintf(&b, "    # %s\n    {nkey: %s, permissions: {\n", r.Name, key)
		fmt.Fprintf(&b, "      publish: {allow: %s}\n", list(p.Publish))
		fmt.Fprintf(&b, "      subscribe: {allow: %s}\n    }}\n", list(p.Subscribe))
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

func list(subjects []string) string {
	q := make([]string, len(subjects))
	for i, s := range subjects {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// EmbeddedUsers are the identities as users of the embedded server.
func EmbeddedUsers(cfg bus.Config, keys map[string]string) []embednats.User {
	var users []embednats.User
	for _, r := range Roles() {
		p := Permissions(cfg, r)
		users = append(users, embednats.User{Nkey: keys[r.Name], Publish: p.Publish, Subscribe: p.Subscribe})
	}
	return users
}
