package bolt

import (
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// Channel returns the channel's settings: its default agent and its MCP
// servers; the zero value when none are set.
func (s *Store) Channel(ctx context.Context, team, channel string) (storage.ChannelSettings, error) {
	key, err := channelKey(team, channel)
	if err != nil {
		return storage.ChannelSettings{}, fmt.Errorf("channel settings: %w", err)
	}
	var c storage.ChannelSettings
	err = s.view(ctx, func(tx *bbolt.Tx) error {
		c, err = channelTx(tx, key)
		return err
	})
	if err != nil {
		return storage.ChannelSettings{}, fmt.Errorf("channel settings %s: %w", key, err)
	}
	return c, nil
}

// EditChannel sets the channel's settings to what edit makes of them, in
// one transaction.
func (s *Store) EditChannel(ctx context.Context, team, channel string, edit func(*storage.ChannelSettings) error) error {
	key, err := channelKey(team, channel)
	if err != nil {
		return fmt.Errorf("set channel settings: %w", err)
	}
	err = s.update(ctx, func(tx *bbolt.Tx) error {
		c, err := channelTx(tx, key)
		if err != nil {
			return err
		}
		if err := edit(&c); err != nil {
			return err
		}
		if c, err = storage.CleanChannel(c); err != nil {
			return err
		}
		agents := tx.Bucket(bucketChannels)
		if c.Agent == "" {
			err = agents.Delete(key)
		} else {
			err = agents.Put(key, []byte(c.Agent))
		}
		if err != nil {
			return err
		}
		tools, err := tx.CreateBucketIfNotExists(bucketChannelTools)
		if err != nil {
			return err
		}
		if len(c.Tools) == 0 {
			return tools.Delete(key)
		}
		data, err := json.Marshal(c.Tools)
		if err != nil {
			return err
		}
		return tools.Put(key, data)
	})
	if err != nil {
		return fmt.Errorf("set channel settings %s: %w", key, err)
	}
	return nil
}

// channelTx reads the channel's settings in tx.
func channelTx(tx *bbolt.Tx, key []byte) (storage.ChannelSettings, error) {
	c := storage.ChannelSettings{Agent: string(tx.Bucket(bucketChannels).Get(key))}
	if b := tx.Bucket(bucketChannelTools); b != nil {
		if v := b.Get(key); v != nil {
			if err := json.Unmarshal(v, &c.Tools); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// channelKey is the channel's bucket key (see storage.ChannelKey).
func channelKey(team, channel string) ([]byte, error) {
	k, err := storage.ChannelKey(team, channel)
	return []byte(k), err
}
