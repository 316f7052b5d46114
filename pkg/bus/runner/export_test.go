package runner

// WithBeforeAck sets a hook run between publishing outputs and acking; when
// it returns false the runner leaves the input unsettled, as a crash would.
func WithBeforeAck(o Options, hook func(fn string) bool) Options {
	o.beforeAck = hook
	return o
}
