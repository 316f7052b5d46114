package bus

import "time"

// SetClock sets the clock a holder stamps and checks expiries with.
func SetClock(l *Leases, now func() time.Time) { l.now = now }
