package busauth

import (
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// FleetBucket is the hub's KV bucket of fleet records (one per push; the
// hub's promotion controller's Store).
const FleetBucket = "inplace-fleet"

// FleetConsumer is the hub's durable consumer of the members' outcomes on
// fleetnet.HubStream.
const FleetConsumer = FleetHub

// FleetSubjects are what the fleet hub may publish beyond its consumer of
// pushes: the account's JetStream limits (read before a bucket is made),
// the fleet records (create the bucket, read, write, list and
// watch them), the hub's stream of outcomes (create and update it with
// its sources, read it through FleetConsumer alone), the hub's stream of
// releases (fleetnet.PromoteStream: create, update and look it up; the
// members source it) and a release to any member
// (fleet.<cluster>.promote.push, published to that stream).
func FleetSubjects() []string {
	api, s, c := "$JS.API.", fleetnet.HubStream, FleetConsumer
	out := []string{api + "INFO", api + "STREAM.CREATE.KV_" + FleetBucket, api + "STREAM.UPDATE.KV_" + FleetBucket, "$KV." + FleetBucket + ".>"}
	out = append(out, readKV(FleetBucket)...)
	out = append(out, listKV(FleetBucket)...)
	return append(out,
		api+"STREAM.CREATE."+s, api+"STREAM.UPDATE."+s, api+"STREAM.INFO."+s,
		api+"CONSUMER.CREATE."+s+"."+c, api+"CONSUMER.CREATE."+s+"."+c+".>", api+"CONSUMER.DURABLE.CREATE."+s+"."+c,
		api+"CONSUMER.INFO."+s+"."+c, api+"CONSUMER.MSG.NEXT."+s+"."+c, "$JS.ACK."+s+"."+c+".>",
		api+"STREAM.CREATE."+fleetnet.PromoteStream, api+"STREAM.UPDATE."+fleetnet.PromoteStream,
		api+"STREAM.INFO."+fleetnet.PromoteStream, fleetnet.PromotePush("*"))
}
