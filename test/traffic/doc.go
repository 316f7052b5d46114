// Package traffic measures what a rollout costs the clients of a
// workload: Start runs the traffic probe (test/images/cmd/probe) as a pod
// of the test world, sending requests at a steady rate (default 50/s, new
// connections, a short timeout each) to a URL such as a Service's DNS
// name, http://web.<ns>.svc.cluster.local:8080/, so the requests resolve
// through the cluster's DNS and go through kube-proxy as a client's
// would. The probe counts ok and failed requests (refused, reset,
// timeout, 5xx, other) and the versions that answered; the test reads the
// counts through the API server's pods/proxy subresource.
//
//	p, err := traffic.Start(ctx, client, ns, "http://web."+ns+".svc.cluster.local:8080/",
//		traffic.Options{Registry: w.Registry})
//	before, err := p.Steady(ctx, time.Minute) // a window opens once it answers
//	... the rollout ...
//	final, err := p.Stop(ctx)
//	window := final.Sub(before)  // window.Failed, window.Versions
//
// It needs real nodes (a probe on a simulated node never runs); the
// counting itself is test/traffic/probe, tested in process.
package traffic
