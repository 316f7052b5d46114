package faults

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// streamLeader names the server leading a stream's Raft group.
func streamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil {
		return "", fmt.Errorf("stream %s is not clustered", stream)
	}
	return info.Cluster.Leader, nil
}
