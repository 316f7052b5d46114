package controller

import (
	"time"

	"github.com/inplace-dev/inplace/pkg/core/planner"
)

// watchdog is the configuration now, with Deps' overrides.
func (ctl *Rollouts) watchdog() planner.Watchdog {
	d := ctl.d.Defaults.Load()
	w := planner.Watchdog{Period: planner.DefaultWatchdogPeriod, Slack: d.WatchdogSlack, NudgeEvery: d.WatchdogRemindEvery,
		Nudges: d.WatchdogReminders, StallDeadline: d.StallDeadline, PrepullTimeout: d.PrepullTimeout,
		VerifySeconds: d.Policy.VerifySeconds}
	o := ctl.d.Watchdog
	for _, x := range []struct{ dst, src *time.Duration }{{&w.Period, &o.Period}, {&w.Slack, &o.Slack},
		{&w.NudgeEvery, &o.NudgeEvery}, {&w.StallDeadline, &o.StallDeadline}, {&w.PrepullTimeout, &o.PrepullTimeout}} {
		if *x.src > 0 {
			*x.dst = *x.src
		}
	}
	if o.Nudges > 0 {
		w.Nudges = o.Nudges
	}
	if o.VerifySeconds > 0 {
		w.VerifySeconds = o.VerifySeconds
	}
	w.NudgeEvery = max(w.NudgeEvery, time.Second)
	return w
}
