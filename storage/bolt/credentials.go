package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// Layout of credentials (schema 6): credentials/<team/user/server> is the
// JSON of a credRecord, the secret in it sealed; flows/<state> is the
// flow's 8-byte expiry (UnixNano) followed by its sealed bytes.
var (
	bucketCredentials = []byte("credentials")
	bucketFlows       = []byte("flows")
)

// credRecord is a credential as stored: times in Unix nanoseconds (0: a
// zero time), as storage/postgres keeps them.
type credRecord struct {
	Account string   `json:"account,omitempty"`
	Scopes  []string `json:"scopes,omitempty"`
	Expiry  int64    `json:"expiry,omitempty"`
	Updated int64    `json:"updated"`
	Sealed  []byte   `json:"sealed"`
}

// PutCredential stores c, replacing what (c.Team, c.User, c.Server) held;
// a zero c.Updated is the store's now.
func (s *Store) PutCredential(ctx context.Context, c storage.Credential) error {
	if err := storage.CheckCredential(c); err != nil {
		return err
	}
	key, _ := storage.CredentialKey(c.Team, c.User, c.Server)
	if c.Updated.IsZero() {
		c.Updated = s.now()
	}
	data, err := json.Marshal(credRecord{Account: c.Account, Scopes: c.Scopes, Expiry: storage.UnixNano(c.Expiry), Updated: storage.UnixNano(c.Updated), Sealed: c.Sealed})
	if err == nil {
		err = s.update(ctx, func(tx *bbolt.Tx) error { return tx.Bucket(bucketCredentials).Put([]byte(key), data) })
	}
	if err != nil {
		return fmt.Errorf("put credential %s: %w", key, err)
	}
	return nil
}

// Credential returns the credential of (team, user, server), or an error
// matching storage.ErrNotFound.
func (s *Store) Credential(ctx context.Context, team, user, server string) (storage.Credential, error) {
	key, err := storage.CredentialKey(team, user, server)
	if err != nil {
		return storage.Credential{}, fmt.Errorf("credential: %w", err)
	}
	var c storage.Credential
	err = s.view(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketCredentials).Get([]byte(key))
		if v == nil {
			return storage.ErrNotFound
		}
		c, err = decodeCredential(key, v)
		return err
	})
	if err != nil {
		return storage.Credential{}, fmt.Errorf("credential %s: %w", key, err)
	}
	return c, nil
}

// decodeCredential decodes the record v stored under key.
func decodeCredential(key string, v []byte) (storage.Credential, error) {
	var r credRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return storage.Credential{}, fmt.Errorf("corrupt credential record: %w", err)
	}
	parts := bytes.SplitN([]byte(key), []byte("/"), 3)
	if len(parts) != 3 {
		return storage.Credential{}, errors.New("corrupt credential key")
	}
	return storage.Credential{
		CredentialInfo: storage.CredentialInfo{Team: string(parts[0]), User: string(parts[1]), Server: string(parts[2]),
			Account: r.Account, Scopes: r.Scopes, Expiry: storage.FromUnixNano(r.Expiry), Updated: storage.FromUnixNano(r.Updated)},
		Sealed: r.Sealed,
	}, nil
}

// DeleteCredential removes the credential of (team, user, server), if any.
func (s *Store) DeleteCredential(ctx context.Context, team, user, server string) error {
	key, err := storage.CredentialKey(team, user, server)
	if err != nil {
		return fmt.Errorf("delete credential: %w", err)
	}
	err = s.update(ctx, func(tx *bbolt.Tx) error { return tx.Bucket(bucketCredentials).Delete([]byte(key)) })
	if err != nil {
		return fmt.Errorf("delete credential %s: %w", key, err)
	}
	return nil
}

// ListCredentials lists the credentials f selects, without their sealed
// bytes, in key order (team, user, server).
func (s *Store) ListCredentials(ctx context.Context, f storage.CredentialFilter) ([]storage.CredentialInfo, error) {
	var out []storage.CredentialInfo
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketCredentials).ForEach(func(k, v []byte) error {
			c, err := decodeCredential(string(k), v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if f.Match(c.CredentialInfo) {
				out = append(out, c.CredentialInfo)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	return out, nil
}

// PutFlow stores a pending flow's sealed bytes under state until expires,
// and removes the flows expired by now (they are few).
func (s *Store) PutFlow(ctx context.Context, state string, sealed []byte, expires time.Time) error {
	if err := storage.CheckFlow(state, sealed, expires); err != nil {
		return err
	}
	now := s.now().UnixNano()
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketFlows)
		if err := sweepFlows(b, now); err != nil {
			return err
		}
		return b.Put([]byte(state), append(u64Key(uint64(expires.UnixNano())), sealed...))
	})
	if err != nil {
		return fmt.Errorf("put flow: %w", err)
	}
	return nil
}

// TakeFlow returns the sealed bytes of state's flow and deletes it in the
// same transaction; taken, expired or missing is storage.ErrNotFound.
func (s *Store) TakeFlow(ctx context.Context, state string) ([]byte, error) {
	if err := storage.CheckKey("flow state", state); err != nil {
		return nil, fmt.Errorf("take flow: %w", err)
	}
	now := s.now().UnixNano()
	var sealed []byte
	live := false
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketFlows)
		v := b.Get([]byte(state))
		if v == nil {
			return storage.ErrNotFound
		}
		if len(v) < 8 {
			return errors.New("corrupt flow record")
		}
		live = int64(be64(v[:8])) > now
		sealed = append([]byte(nil), v[8:]...)
		return b.Delete([]byte(state)) // an expired flow goes too
	})
	if err != nil {
		return nil, fmt.Errorf("take flow: %w", err)
	}
	if !live {
		return nil, fmt.Errorf("take flow: expired: %w", storage.ErrNotFound)
	}
	return sealed, nil
}

// sweepFlows deletes the flows of b that expire at or before now (Unix
// nanoseconds).
func sweepFlows(b *bbolt.Bucket, now int64) error {
	var expired [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) < 8 || int64(be64(v[:8])) <= now {
			expired = append(expired, append([]byte(nil), k...))
		}
	}
	for _, k := range expired {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
