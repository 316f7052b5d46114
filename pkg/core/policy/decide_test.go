package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	dgA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	dgB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		cur    Current
		push   Pushed
		want   Decision
	}{
		// semver:minor
		{"minor allows newer minor", "semver:minor", Current{"1.24.0", dgA}, Pushed{"1.25.1", dgB},
			Decision{true, "1.24.0 → 1.25.1 allowed by semver:minor"}},
		{"minor allows a newer minor", "semver:minor", Current{"1.25.0", dgA}, Pushed{"1.26.0", ""},
			Decision{true, "1.25.0 → 1.26.0 allowed by semver:minor"}},
		{"minor refuses major 2", "semver:minor", Current{"1.26.0", dgA}, Pushed{"2.0.0", dgB},
			Decision{false, "2.0.0 is a new major, policy semver:minor"}},
		{"minor refuses downgrade", "semver:minor", Current{"2.1.0", dgA}, Pushed{"2.0.0", dgB},
			Decision{false, "2.0.0 would downgrade from 2.1.0"}},
		{"minor refuses same version", "semver:minor", Current{"1.25.1", dgA}, Pushed{"1.25.1", dgB},
			Decision{false, "1.25.1 is not newer than the running 1.25.1; policy semver:minor moves only to newer versions"}},
		{"same digest is already running", "semver:minor", Current{"1.25.1", dgA}, Pushed{"1.25.2", dgA},
			Decision{false, "already running " + dgA}},
		{"minor refuses non-semver push", "semver:minor", Current{"1.25.1", dgA}, Pushed{"latest", dgB},
			Decision{false, "tag latest is not a semantic version, policy semver:minor"}},
		{"minor needs a versioned current", "semver:minor", Current{"latest", dgA}, Pushed{"1.25.1", dgB},
			Decision{false, "the running tag latest is not a semantic version; policy semver:minor needs one to compare"}},
		{"v prefix", "semver:minor", Current{"v1.2.3", dgA}, Pushed{"v1.3.0", dgB},
			Decision{true, "v1.2.3 → v1.3.0 allowed by semver:minor"}},
		{"v prefix mixed with plain", "semver:patch", Current{"1.2.3", dgA}, Pushed{"v1.2.4", dgB},
			Decision{true, "1.2.3 → v1.2.4 allowed by semver:patch"}},
		{"short tag newer", "semver:minor", Current{"1.24", dgA}, Pushed{"1.25", dgB},
			Decision{true, "1.24 → 1.25 allowed by semver:minor"}},
		{"short tag equal to long", "semver:minor", Current{"1.25.0", dgA}, Pushed{"1.25", dgB},
			Decision{false, "1.25 is not newer than the running 1.25.0; policy semver:minor moves only to newer versions"}},
		// pre-releases and variants
		{"pre-release refused from release", "semver:minor", Current{"1.24.0", dgA}, Pushed{"1.25.0-rc.1", dgB},
			Decision{false, "1.25.0-rc.1 is a pre-release, policy semver:minor"}},
		{"pre-release to next pre-release", "semver:minor", Current{"1.25.0-rc.1", dgA}, Pushed{"1.25.0-rc.2", dgB},
			Decision{true, "1.25.0-rc.1 → 1.25.0-rc.2 allowed by semver:minor"}},
		{"pre-release graduates", "semver:patch", Current{"1.25.0-rc.2", dgA}, Pushed{"1.25.0", dgB},
			Decision{true, "1.25.0-rc.2 → 1.25.0 allowed by semver:patch"}},
		{"variant kept", "semver:minor", Current{"1.24-alpine", dgA}, Pushed{"1.25-alpine", dgB},
			Decision{true, "1.24-alpine → 1.25-alpine allowed by semver:minor"}},
		{"variant not switched", "semver:minor", Current{"1.24-alpine", dgA}, Pushed{"1.25-bookworm", dgB},
			Decision{false, "1.25-bookworm is another variant than the running 1.24-alpine, policy semver:minor"}},
		{"variant not dropped", "semver:minor", Current{"1.24-alpine", dgA}, Pushed{"1.25", dgB},
			Decision{false, "1.25 is another variant than the running 1.24-alpine, policy semver:minor"}},
		// semver:patch and major
		{"patch allows patch", "semver:patch", Current{"1.25.0", dgA}, Pushed{"1.25.3", dgB},
			Decision{true, "1.25.0 → 1.25.3 allowed by semver:patch"}},
		{"patch refuses minor", "semver:patch", Current{"1.25.3", dgA}, Pushed{"1.26.0", dgB},
			Decision{false, "1.26.0 is a new minor, policy semver:patch"}},
		{"patch refuses major", "semver:patch", Current{"1.25.3", dgA}, Pushed{"2.25.3", dgB},
			Decision{false, "2.25.3 is a new major, policy semver:patch"}},
		{"major allows major", "semver:major", Current{"1.25.3", dgA}, Pushed{"3.0.0", dgB},
			Decision{true, "1.25.3 → 3.0.0 allowed by semver:major"}},
		{"major from latest", "semver:major", Current{"latest", dgA}, Pushed{"3.0.0", dgB},
			Decision{true, "latest → 3.0.0 allowed by semver:major"}},
		{"major from latest no pre-release", "semver:major", Current{"latest", dgA}, Pushed{"3.0.0-beta.1", dgB},
			Decision{false, "3.0.0-beta.1 is a pre-release, policy semver:major"}},
		// constraints
		{"tilde allows", "semver:~1.25", Current{"1.25.0", dgA}, Pushed{"1.25.4", dgB},
			Decision{true, "1.25.0 → 1.25.4 allowed by semver:~1.25"}},
		{"tilde refuses", "semver:~1.25", Current{"1.25.0", dgA}, Pushed{"1.26.0", dgB},
			Decision{false, "1.26.0 does not satisfy ~1.25, policy semver:~1.25"}},
		{"caret allows", "semver:^2", Current{"2.1.0", dgA}, Pushed{"2.9.0", dgB},
			Decision{true, "2.1.0 → 2.9.0 allowed by semver:^2"}},
		{"range refuses", "semver:>=1.2, <2", Current{"1.9.0", dgA}, Pushed{"2.0.0", dgB},
			Decision{false, "2.0.0 does not satisfy >=1.2, <2, policy semver:>=1.2, <2"}},
		{"constraint refuses pre-release", "semver:~1.25", Current{"1.25.0", dgA}, Pushed{"1.25.1-rc.1", dgB},
			Decision{false, "1.25.1-rc.1 is a pre-release outside ~1.25, policy semver:~1.25 (a range allows pre-releases when it names one, e.g. >=1.2.0-0)"}},
		{"constraint naming pre-release allows it", "semver:>=1.25.0-0", Current{"1.25.0-alpha.1", dgA}, Pushed{"1.25.1-rc.1", dgB},
			Decision{true, "1.25.0-alpha.1 → 1.25.1-rc.1 allowed by semver:>=1.25.0-0"}},
		{"constraint from latest", "semver:~1.25", Current{"latest", dgA}, Pushed{"1.25.2", dgB},
			Decision{true, "latest → 1.25.2 allowed by semver:~1.25"}},
		{"constraint still never downgrades", "semver:~1.25", Current{"1.25.3", dgA}, Pushed{"1.25.1", dgB},
			Decision{false, "1.25.1 would downgrade from 1.25.3"}},
		// force
		{"force any tag", "force", Current{"1.25.0", dgA}, Pushed{"canary", dgB},
			Decision{true, "1.25.0 → canary allowed by force"}},
		{"force refuses downgrade", "force", Current{"2.1.0", dgA}, Pushed{"2.0.0", dgB},
			Decision{false, "2.0.0 would downgrade from 2.1.0"}},
		{"force re-push", "force", Current{"1.25.0", dgA}, Pushed{"1.25.0", dgB},
			Decision{true, "1.25.0: " + dgA + " → " + dgB + " allowed by force"}},
		{"force digest-only push", "force", Current{"1.25.0", dgA}, Pushed{"", dgB},
			Decision{true, "1.25.0 → " + dgB + " allowed by force"}},
		{"force same digest", "force", Current{"1.25.0", dgA}, Pushed{"1.25.0", dgA},
			Decision{false, "already running " + dgA}},
		// glob and regexp
		{"glob matches", "glob:1.*", Current{"1.24", dgA}, Pushed{"1.25", dgB},
			Decision{true, "1.24 → 1.25 allowed by glob:1.*"}},
		{"glob refuses", "glob:1.*", Current{"1.24", dgA}, Pushed{"2.0", dgB},
			Decision{false, "tag 2.0 does not match glob:1.*"}},
		{"glob refuses downgrade", "glob:1.*", Current{"1.25", dgA}, Pushed{"1.24", dgB},
			Decision{false, "1.24 would downgrade from 1.25"}},
		{"regexp matches whole tag", `regexp:main-[0-9a-f]+`, Current{"main-abc1", dgA}, Pushed{"main-def2", dgB},
			Decision{true, "main-abc1 → main-def2 allowed by regexp:main-[0-9a-f]+"}},
		{"regexp partial match refused", `regexp:main-[0-9a-f]+`, Current{"main-abc1", dgA}, Pushed{"main-def2-debug", dgB},
			Decision{false, "tag main-def2-debug does not match regexp:main-[0-9a-f]+"}},
		{"regexp refuses downgrade", `regexp:v.*`, Current{"v2.1.0", dgA}, Pushed{"v2.0.9", dgB},
			Decision{false, "v2.0.9 would downgrade from v2.1.0"}},
		// digest
		{"digest follows the running tag", "digest", Current{"latest", dgA}, Pushed{"latest", dgB},
			Decision{true, "latest: " + dgA + " → " + dgB + " allowed by digest"}},
		{"digest unknown upgrades", "digest", Current{"latest", dgA}, Pushed{"latest", ""},
			Decision{true, "latest pushed again (digest unknown, the kubelet resolves it) allowed by digest"}},
		{"digest running unknown", "digest", Current{"latest", ""}, Pushed{"latest", dgB},
			Decision{true, "latest: (unknown) → " + dgB + " allowed by digest"}},
		{"digest same digest", "digest", Current{"latest", dgA}, Pushed{"latest", dgA},
			Decision{false, "already running " + dgA}},
		{"digest other tag", "digest", Current{"latest", dgA}, Pushed{"1.25", dgB},
			Decision{false, "1.25 is not the running tag latest; policy digest follows only the running tag"}},
		{"digest-only push needs a tag", "digest", Current{"latest", dgA}, Pushed{"", dgB},
			Decision{false, "the push names no tag, only " + dgB + "; policy digest needs a tag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			got := Decide(p, tt.cur, tt.push)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewest(t *testing.T) {
	tags := []string{"1.2.0", "1.2.3", "1.3.0", "1.3.1-rc.1", "2.0.0", "latest", "v1.4.0", "1.1.9", "sha256-abc.sig"}
	tests := []struct {
		policy, current, want string
	}{
		{"semver:patch", "1.2.0", "1.2.3"},
		{"semver:minor", "1.2.0", "v1.4.0"},
		{"semver:major", "1.2.0", "2.0.0"},
		{"semver:~1.3", "1.2.0", "1.3.0"},
		{"semver:minor", "2.0.0", ""},
		{"semver:minor", "v1.4.0", ""},
		{"semver:major", "latest", "2.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.policy+" from "+tt.current, func(t *testing.T) {
			p, err := Parse(tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			if got := Newest(p, tt.current, tags); got != tt.want {
				t.Errorf("Newest = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestNeedsApproval(t *testing.T) {
	tests := []struct {
		mode     Approval
		from, to string
		want     bool
	}{
		{ApprovalNone, "1.0.0", "2.0.0", false},
		{ApprovalMajor, "1.4.0", "2.0.0", true},
		{ApprovalMajor, "v1.4.0", "v1.9.0", false},
		{ApprovalMajor, "latest", "2.0.0", true},
		{ApprovalMajor, "latest", "latest", false},
		{ApprovalAll, "latest", "latest", true},
	}
	for _, tt := range tests {
		if got := NeedsApproval(tt.mode, tt.from, tt.to) != ""; got != tt.want {
			t.Errorf("NeedsApproval(%s, %s, %s) = %v; want %v", tt.mode, tt.from, tt.to, got, tt.want)
		}
	}
}

// The undo policy (an undo compute-spec checked) goes down a version, or to
// a digest without a tag, but never to the digest a container runs; and it
// is no annotation a workload can set.
func TestDecideUndo(t *testing.T) {
	cur := Current{Tag: "1.3.0", Digest: "sha256:13"}
	for _, tc := range []struct {
		name string
		push Pushed
		want bool
	}{
		{"down a version", Pushed{Tag: "1.2.0", Digest: "sha256:12"}, true},
		{"a digest alone", Pushed{Digest: "sha256:12"}, true},
		{"the running digest", Pushed{Tag: "1.2.0", Digest: "sha256:13"}, false},
	} {
		if got := Decide(UndoPolicy(), cur, tc.push); got.Upgrade != tc.want {
			t.Errorf("%s: %+v; want upgrade %v", tc.name, got, tc.want)
		}
	}
	if p, err := Parse("undo"); err == nil {
		t.Errorf("the annotation value undo parses as %+v", p)
	}
}
