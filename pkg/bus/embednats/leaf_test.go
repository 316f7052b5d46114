package embednats

import (
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

// A hub or a leaf is refused, naming what is wrong, before anything starts.
func TestLeafOptionsAreChecked(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	users := []User{{Nkey: pub, Publish: []string{">"}, Subscribe: []string{">"}}}
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"hub without a domain", Options{Users: users, Hub: &Hub{Port: -1}}, "domain"},
		{"hub without users", Options{Domain: "hub", Hub: &Hub{Port: -1}}, "Users"},
		{"leaf without a domain", Options{Leaf: &Leaf{URL: "nats-leaf://127.0.0.1:7422", Seed: string(seed)}}, "domain"},
		{"leaf without a URL", Options{Domain: "a", Leaf: &Leaf{Seed: string(seed)}}, "hub URL"},
		{"leaf with a public key for a seed", Options{Domain: "a", Leaf: &Leaf{URL: "nats-leaf://127.0.0.1:7422", Seed: pub}}, "seed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.DataDir, tc.opts.Port = t.TempDir(), -1
			s, err := Start(tc.opts)
			if err == nil {
				s.Shutdown()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

// A leaf joins its hub on loopback; the hub counts it and names it.
func TestALeafJoinsItsHub(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	hub := start(t, Options{DataDir: t.TempDir(), Port: -1, Domain: "hub", Hub: &Hub{Port: -1},
		Users: []User{{Nkey: pub, Publish: []string{"x.>"}, Subscribe: []string{"x.>"}}}})
	if !strings.HasPrefix(hub.LeafURL(), "nats-leaf://127.0.0.1:") {
		t.Fatalf("LeafURL %q, want loopback", hub.LeafURL())
	}
	leaf := start(t, Options{DataDir: t.TempDir(), Port: -1, Name: "a", Domain: "a", Leaf: &Leaf{URL: hub.LeafURL(), Seed: string(seed)}})
	if err := hub.WaitLeafs(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := leaf.WaitLeafs(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if got := hub.LeafNames(); len(got) != 1 || got[0] != "a" {
		t.Errorf("LeafNames %v, want [a]", got)
	}
	if leaf.LeafURL() != "" {
		t.Errorf("a leaf's LeafURL is %q, want none", leaf.LeafURL())
	}
}
