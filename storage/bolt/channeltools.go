package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// bucketChannelTools maps "team/channel" to the JSON list of MCP servers
// the channel adds to its agents' tools (/agent tools add).
var bucketChannelTools = []byte("channel_tools")

// channelTools returns every channel's servers, by "team/channel" (for
// Migrate).
func (s *Store) channelTools(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketChannelTools)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var servers []string
			if err := json.Unmarshal(v, &servers); err != nil {
				return fmt.Errorf("channel tools %s: %w", k, err)
			}
			out[string(k)] = servers
			return nil
		})
	})
	return out, err
}
