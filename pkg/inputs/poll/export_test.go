package poll

import "time"

// Refresh reads the watches now, as Run does every Deps.Refresh.
func Refresh(p *Poller, now time.Time) error { return p.refresh(now) }
