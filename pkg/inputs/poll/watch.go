package poll

import (
	"slices"
	"sort"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/policy"
)

// Watch is one opted-in workload that wants its registry polled: the
// images its pods run, its policy and interval, and the pull secrets its
// pods name ("namespace/name").
type Watch struct {
	Workload string
	Policy   policy.Policy
	Interval time.Duration
	Images   []imageref.Ref
	Secrets  []string
}

// Sub is one question for the registry. A tag subscription (Tag set) is a
// HEAD on that tag's manifest; a list subscription (Tag empty) lists the
// repository's tags and asks for the newest each of Wants allows.
type Sub struct {
	Registry, Repository string
	Tag                  string
	Wants                []Want
	Interval             time.Duration
	Secrets              []string
}

// Want is a semver policy and the tag it runs now.
type Want struct {
	Policy  policy.Policy
	Current string
}

// Key names the subscription: "<registry>/<repository>:<tag>" or, for a
// tag list, "<registry>/<repository>".
func (s Sub) Key() string {
	k := s.Registry + "/" + s.Repository
	if s.Tag != "" {
		k += ":" + s.Tag
	}
	return k
}

// Subscriptions merges the workloads' wants: one subscription per tag (or
// per repository for semver policies), polled at the shortest interval of
// the workloads that want it, with every pull secret they name. An image
// pinned by digest alone has no tag to follow and is left out.
func Subscriptions(ws []Watch) []Sub {
	byKey := map[string]*Sub{}
	add := func(s Sub, w Watch) {
		cur, ok := byKey[s.Key()]
		if !ok {
			s.Interval = w.Interval
			byKey[s.Key()] = &s
			cur = &s
		}
		cur.Interval = min(cur.Interval, w.Interval)
		for _, sec := range w.Secrets {
			if !slices.Contains(cur.Secrets, sec) {
				cur.Secrets = append(cur.Secrets, sec)
			}
		}
		cur.Wants = append(cur.Wants, s.Wants...)
	}
	for _, w := range ws {
		if w.Interval <= 0 {
			continue
		}
		for _, img := range w.Images {
			if img.Tag == "" {
				continue
			}
			s := Sub{Registry: img.Registry, Repository: img.Repository}
			if w.Policy.Semver() {
				s.Wants = []Want{{Policy: w.Policy, Current: img.Tag}}
			} else {
				s.Tag = img.Tag
			}
			add(s, w)
		}
	}
	out := make([]Sub, 0, len(byKey))
	for _, s := range byKey {
		sort.Strings(s.Secrets)
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Targets are the tags of a list subscription worth a HEAD: for each want,
// the newest version its policy allows, if any.
func (s Sub) Targets(tags []string) []string {
	var out []string
	for _, w := range s.Wants {
		if t := policy.Newest(w.Policy, w.Current, tags); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}
