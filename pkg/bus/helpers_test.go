package bus_test

import "github.com/nats-io/nats.go/jetstream"

func jetstreamSubjects(filter string) jetstream.StreamInfoOpt {
	return jetstream.WithSubjectFilter(filter)
}
