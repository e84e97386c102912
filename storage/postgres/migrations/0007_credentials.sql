-- OAuth credentials per (team, user, server), and the authorization flows
-- waiting for their redirect. The secrets are sealed (storage/secretbox):
-- sealed is ciphertext, never a token. Times are Unix nanoseconds, as
-- elsewhere; expiry 0 is unknown.
CREATE TABLE credentials (
    team    text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL,
    server  text COLLATE "C" NOT NULL,
    account text NOT NULL DEFAULT '',
    scopes  text[] NOT NULL DEFAULT '{}',
    expiry  bigint NOT NULL DEFAULT 0,
    updated bigint NOT NULL,
    sealed  bytea NOT NULL,
    PRIMARY KEY (team, user_id, server)
);

-- A flow is taken once: TakeFlow deletes the row it returns.
CREATE TABLE oauth_flows (
    state   text COLLATE "C" PRIMARY KEY,
    expires bigint NOT NULL,
    sealed  bytea NOT NULL
);
CREATE INDEX oauth_flows_expires ON oauth_flows (expires);
