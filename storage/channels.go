package storage

import (
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// ChannelDefault returns the agent id new sessions in the channel start
// with, or "" when none is set.
func (s *Store) ChannelDefault(team, channel string) (string, error) {
	key, err := channelKey(team, channel)
	if err != nil {
		return "", fmt.Errorf("channel default: %w", err)
	}
	var agentID string
	err = s.db.View(func(tx *bolt.Tx) error {
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
func (s *Store) SetChannelDefault(team, channel, agentID string) error {
	key, err := channelKey(team, channel)
	if err != nil {
		return fmt.Errorf("set channel default: %w", err)
	}
	if len(agentID) > MaxKeyLen {
		return fmt.Errorf("set channel default %s: agent id too long (%d bytes, max %d)", key, len(agentID), MaxKeyLen)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
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

// channelKey is "team/channel"; team may be empty, channel may not, and
// neither may hold '/'.
func channelKey(team, channel string) ([]byte, error) {
	if err := CheckKey("channel", channel); err != nil {
		return nil, err
	}
	if strings.Contains(team, "/") || strings.Contains(channel, "/") {
		return nil, fmt.Errorf("team %q or channel %q contains '/'", team, channel)
	}
	if len(team) > MaxKeyLen {
		return nil, fmt.Errorf("team too long (%d bytes, max %d)", len(team), MaxKeyLen)
	}
	return []byte(team + "/" + channel), nil
}
