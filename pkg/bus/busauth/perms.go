package busauth

import (
	"github.com/inplace-dev/inplace/pkg/bus"
)

// Perms are the subjects an identity may publish to and subscribe to.
type Perms struct {
	Publish   []string
	Subscribe []string
}

// Permissions turns r into subjects for the stream, consumers and buckets
// of cfg. JetStream's API is subjects too: reading a consumer's next
// message is a request to $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>,
// acking a publish to $JS.ACK.<stream>.<consumer>.…, a KV put a publish to
// $KV.<bucket>.<key>, a KV get a request to $JS.API.DIRECT.GET.KV_<bucket>.…
func Permissions(cfg bus.Config, r Role) Perms {
	if r.All {
		return Perms{Publish: []string{">"}, Subscribe: []string{">"}}
	}
	api := "$JS.API."
	p := Perms{Subscribe: []string{InboxPrefix(r.Name) + ".>"}}
	pub := func(s ...string) { p.Publish = append(p.Publish, s...) }
	pub(api + "STREAM.INFO." + cfg.Stream) // it checks the stream is there
	for _, t := range r.Publishes {
		pub(cfg.Subject(t))
	}
	if r.Consumer {
		s, c, f := cfg.Stream, r.Name, cfg.FailuresBucket()
		pub(api+"CONSUMER.INFO."+s+"."+c, api+"CONSUMER.MSG.NEXT."+s+"."+c, "$JS.ACK."+s+"."+c+".>",
			cfg.DLQSubject(c))
		// its own failure counts only: direct gets name the key
		pub(api+"STREAM.INFO.KV_"+f, api+"DIRECT.GET.KV_"+f+".$KV."+f+"."+c+".>", "$KV."+f+"."+c+".>")
	}
	if r.Consumer || r.Leases {
		// its own leases only (bus.Leases: one replica acts on a pod at a
		// time; bus.Leader: one replica does a singleton's work)
		l, n := cfg.LeasesBucket(), r.Name
		pub(api+"STREAM.INFO.KV_"+l, api+"DIRECT.GET.KV_"+l+".$KV."+l+"."+n+".>", "$KV."+l+"."+n+".>")
	}
	pub(r.Subjects...)
	switch r.Rollouts {
	case Read:
		pub(readKV(cfg.KVBucket)...)
	case Write:
		b := cfg.KVBucket
		pub(readKV(b)...)
		pub("$KV." + b + ".>")
		pub(listKV(b)...)
	case List:
		pub(readKV(cfg.KVBucket)...)
		pub(listKV(cfg.KVBucket)...)
	}
	return p
}

// listKV are the subjects of listing a bucket's keys: an ordered consumer
// on the bucket's stream.
func listKV(b string) []string {
	api := "$JS.API."
	return []string{api + "CONSUMER.CREATE.KV_" + b, api + "CONSUMER.CREATE.KV_" + b + ".>", api + "CONSUMER.DELETE.KV_" + b + ".>",
		api + "CONSUMER.INFO.KV_" + b + ".>", api + "CONSUMER.MSG.NEXT.KV_" + b + ".>", "$JS.FC.KV_" + b + ".>"}
}

// readKV are the subjects of reading a bucket: binding to it, getting a key
// directly or through the stream.
func readKV(bucket string) []string {
	s := "KV_" + bucket
	return []string{"$JS.API.STREAM.INFO." + s, "$JS.API.DIRECT.GET." + s + ".>", "$JS.API.STREAM.MSG.GET." + s}
}
