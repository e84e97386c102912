package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// bucketChannelTools maps "team/channel" to the JSON list of MCP servers
// the channel adds to its agents' tools (/agent tools add).
var bucketChannelTools = []byte("channel_tools")

// ChannelTools returns the MCP servers the channel adds to its agents'
// tools, sorted; nil when none.
func (s *Store) ChannelTools(ctx context.Context, team, channel string) ([]string, error) {
	key, err := channelKey(team, channel)
	if err != nil {
		return nil, fmt.Errorf("channel tools: %w", err)
	}
	var servers []string
	err = s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketChannelTools)
		if b == nil {
			return nil
		}
		if v := b.Get(key); v != nil {
			return json.Unmarshal(v, &servers)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("channel tools %s: %w", key, err)
	}
	return servers, nil
}

// SetChannelTools sets the channel's MCP servers (deduplicated and sorted);
// an empty list clears them.
func (s *Store) SetChannelTools(ctx context.Context, team, channel string, servers []string) error {
	key, err := channelKey(team, channel)
	if err != nil {
		return fmt.Errorf("set channel tools: %w", err)
	}
	servers, err = storage.CleanChannelTools(servers)
	if err != nil {
		return fmt.Errorf("set channel tools %s: %w", key, err)
	}
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketChannelTools)
		if err != nil {
			return err
		}
		if len(servers) == 0 {
			return b.Delete(key)
		}
		data, err := json.Marshal(servers)
		if err != nil {
			return err
		}
		return b.Put(key, data)
	})
	if err != nil {
		return fmt.Errorf("set channel tools %s: %w", key, err)
	}
	return nil
}

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
