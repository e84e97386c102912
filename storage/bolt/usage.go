package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// bucketUsage holds tokens used per workspace and UTC day: "team/day" →
// uint64.
var bucketUsage = []byte("usage")

// AddDailyUsage adds tokens to a workspace's day and returns the day's
// total; with no tokens (0 or less) it only reads the total.
func (s *Store) AddDailyUsage(ctx context.Context, team, day string, tokens int) (int, error) {
	if tokens <= 0 {
		return s.dailyUsage(ctx, team, day)
	}
	var total uint64
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketUsage)
		if err != nil {
			return err
		}
		k := []byte(team + "/" + day)
		if v := b.Get(k); len(v) == 8 {
			total = be64(v)
		}
		total += uint64(tokens)
		return b.Put(k, u64Key(total))
	})
	if err != nil {
		return 0, fmt.Errorf("add daily usage: %w", err)
	}
	return int(total), nil
}

// dailyUsage reads a workspace's tokens of a day.
func (s *Store) dailyUsage(ctx context.Context, team, day string) (int, error) {
	var total uint64
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketUsage); b != nil {
			if v := b.Get([]byte(team + "/" + day)); len(v) == 8 {
				total = be64(v)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("daily usage: %w", err)
	}
	return int(total), nil
}
