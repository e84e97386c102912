package connect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"agentbot/engine/mcp/oauth"
)

// ErrNotFound is what a MemoryStore answers for a record it does not have.
var ErrNotFound = errors.New("not found")

// MemoryStore is a Store in memory, for a process whose tokens live only
// as long as it does (agentbot chat without a secret key) and for tests;
// set the Connector's NotFound to ErrNotFound. Flows past their expiry
// are not found.
type MemoryStore struct {
	mu      sync.Mutex
	tokens  map[string]oauth.Token
	clients map[string]oauth.Client
	flows   map[string]oauth.Flow
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{tokens: map[string]oauth.Token{}, clients: map[string]oauth.Client{}, flows: map[string]oauth.Flow{}}
}

// tkey is the key of a token.
func tkey(team, user, server string) string { return team + "/" + user + "/" + server }

// PutToken stores t for (team, user, server).
func (m *MemoryStore) PutToken(_ context.Context, team, user, server, _ string, t oauth.Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens[tkey(team, user, server)] = t
	return nil
}

// Token is the token of (team, user, server).
func (m *MemoryStore) Token(_ context.Context, team, user, server string) (oauth.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[tkey(team, user, server)]
	if !ok {
		return oauth.Token{}, fmt.Errorf("credential %s: %w", tkey(team, user, server), ErrNotFound)
	}
	return t, nil
}

// PutClient stores the client registered for server.
func (m *MemoryStore) PutClient(_ context.Context, server string, c oauth.Client) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients[server] = c
	return nil
}

// Client is the client registered for server.
func (m *MemoryStore) Client(_ context.Context, server string) (oauth.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.clients[server]
	if !ok {
		return oauth.Client{}, ErrNotFound
	}
	return c, nil
}

// PutFlow keeps f until taken.
func (m *MemoryStore) PutFlow(_ context.Context, f oauth.Flow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flows[f.State] = f
	return nil
}

// TakeFlow returns and forgets the flow of state, unless expired.
func (m *MemoryStore) TakeFlow(_ context.Context, state string) (oauth.Flow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.flows[state]
	if !ok || !time.Now().Before(f.Expires) {
		return oauth.Flow{}, ErrNotFound
	}
	delete(m.flows, state)
	return f, nil
}

// Delete forgets the token of (team, user, server).
func (m *MemoryStore) Delete(_ context.Context, team, user, server string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := tkey(team, user, server)
	if _, ok := m.tokens[k]; !ok {
		return ErrNotFound
	}
	delete(m.tokens, k)
	return nil
}
