package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
)

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
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO credentials (team, user_id, server, account, scopes, expiry, updated, sealed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (team, user_id, server) DO UPDATE SET account = excluded.account, scopes = excluded.scopes,
			expiry = excluded.expiry, updated = excluded.updated, sealed = excluded.sealed`,
		c.Team, c.User, c.Server, c.Account, scopes, storage.UnixNano(c.Expiry), storage.UnixNano(c.Updated), c.Sealed)
	if err != nil {
		return fmt.Errorf("put credential %s: %w", key, err)
	}
	return nil
}

// credentialColumns are what scanCredential reads, sealed last.
const credentialColumns = `team, user_id, server, account, scopes, expiry, updated`

// scanCredential reads credentialColumns (and sealed, when into is not
// nil) from row.
func scanCredential(row pgx.Row, sealed *[]byte) (storage.CredentialInfo, error) {
	var c storage.CredentialInfo
	var expiry, updated int64
	dest := []any{&c.Team, &c.User, &c.Server, &c.Account, &c.Scopes, &expiry, &updated}
	if sealed != nil {
		dest = append(dest, sealed)
	}
	if err := row.Scan(dest...); err != nil {
		return c, err
	}
	if len(c.Scopes) == 0 {
		c.Scopes = nil
	}
	c.Expiry, c.Updated = storage.FromUnixNano(expiry), storage.FromUnixNano(updated)
	return c, nil
}

// Credential returns the credential of (team, user, server), or an error
// matching storage.ErrNotFound.
func (s *Store) Credential(ctx context.Context, team, user, server string) (storage.Credential, error) {
	key, err := storage.CredentialKey(team, user, server)
	if err != nil {
		return storage.Credential{}, fmt.Errorf("credential: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var c storage.Credential
	c.CredentialInfo, err = scanCredential(s.pool.QueryRow(ctx, `SELECT `+credentialColumns+`, sealed FROM credentials
		WHERE team = $1 AND user_id = $2 AND server = $3`, team, user, server), &c.Sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		err = storage.ErrNotFound
	}
	if err != nil {
		return storage.Credential{}, fmt.Errorf("credential %s: %w", key, err)
	}
	return c, nil
}

// DeleteCredential removes the credential of (team, user, server), if any.
func (s *Store) DeleteCredential(ctx context.Context, team, user, server string) error {
	key, err := storage.CredentialKey(team, user, server)
	if err != nil {
		return fmt.Errorf("delete credential: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM credentials WHERE team = $1 AND user_id = $2 AND server = $3`, team, user, server); err != nil {
		return fmt.Errorf("delete credential %s: %w", key, err)
	}
	return nil
}

// ListCredentials lists the credentials f selects, without their sealed
// bytes, by team, user and server.
func (s *Store) ListCredentials(ctx context.Context, f storage.CredentialFilter) ([]storage.CredentialInfo, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT `+credentialColumns+` FROM credentials
		WHERE ($1 = '' OR team = $1) AND ($2 = '' OR user_id = $2) AND ($3 = '' OR server = $3)
		ORDER BY team, user_id, server`, f.Team, f.User, f.Server)
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	defer rows.Close()
	var out []storage.CredentialInfo
	for rows.Next() {
		c, err := scanCredential(rows, nil)
		if err != nil {
			return nil, fmt.Errorf("list credentials: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	return out, nil
}

// PutFlow stores a pending flow's sealed bytes under state until expires,
// and removes the flows expired on the database's clock.
func (s *Store) PutFlow(ctx context.Context, state string, sealed []byte, expires time.Time) error {
	if err := storage.CheckFlow(state, sealed, expires); err != nil {
		return err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM oauth_flows WHERE expires <= agentbot_now_ns() + $1::bigint`, s.shift())
	b.Queue(`INSERT INTO oauth_flows (state, expires, sealed) VALUES ($1, $2, $3)
		ON CONFLICT (state) DO UPDATE SET expires = excluded.expires, sealed = excluded.sealed`, state, expires.UnixNano(), sealed)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("put flow: %w", err)
	}
	return nil
}

// TakeFlow returns the sealed bytes of state's flow and deletes it in the
// same statement, so two replicas cannot both take it; taken, expired (on
// the database's clock) or missing is storage.ErrNotFound.
func (s *Store) TakeFlow(ctx context.Context, state string) ([]byte, error) {
	if err := storage.CheckKey("flow state", state); err != nil {
		return nil, fmt.Errorf("take flow: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var sealed []byte
	var live bool
	err := s.pool.QueryRow(ctx, `DELETE FROM oauth_flows WHERE state = $1
		RETURNING sealed, expires > agentbot_now_ns() + $2::bigint`, state, s.shift()).Scan(&sealed, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("take flow: %w", storage.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("take flow: %w", err)
	}
	if !live {
		return nil, fmt.Errorf("take flow: expired: %w", storage.ErrNotFound)
	}
	return sealed, nil
}
