package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// WaitingSessions lists the keys of the attached sessions with a tool call
// waiting for approval, in key order, from the partial index on waiting.
func (s *Store) WaitingSessions(ctx context.Context) ([]string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT key FROM sessions WHERE waiting AND attached ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("waiting sessions: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("waiting sessions: %w", err)
	}
	return keys, nil
}
