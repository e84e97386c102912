package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// ChannelDefault returns the agent id new sessions in the channel start
// with, or "" when none is set.
func (s *Store) ChannelDefault(ctx context.Context, team, channel string) (string, error) {
	key, err := channelKey(team, channel)
	if err != nil {
		return "", fmt.Errorf("channel default: %w", err)
	}
	var agentID string
	err = s.view(ctx, func(tx *bbolt.Tx) error {
		agentID = string(tx.Bucket(bucketChannels).Get(key))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("channel default %s: %w", key, err)
	}
	return agentID, nil
}

// SetChannelDefault sets the channel's default agent; an empty agentID
// clears it.
func (s *Store) SetChannelDefault(ctx context.Context, team, channel, agentID string) error {
	key, err := channelKey(team, channel)
	if err != nil {
		return fmt.Errorf("set channel default: %w", err)
	}
	if len(agentID) > storage.MaxKeyLen {
		return fmt.Errorf("set channel default %s: agent id too long (%d bytes, max %d)", key, len(agentID), storage.MaxKeyLen)
	}
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketChannels)
		if agentID == "" {
			return b.Delete(key)
		}
		return b.Put(key, []byte(agentID))
	})
	if err != nil {
		return fmt.Errorf("set channel default %s: %w", key, err)
	}
	return nil
}

// channelKey is the channel's bucket key (see storage.ChannelKey).
func channelKey(team, channel string) ([]byte, error) {
	k, err := storage.ChannelKey(team, channel)
	return []byte(k), err
}
