-- agentbot's first PostgreSQL schema. Times the store's clock sets
-- (session times, seen expiry, queue times) are Unix nanoseconds, so they
-- compare exactly as the bbolt store's do; leases use the database clock.

CREATE TABLE sessions (
    id       text PRIMARY KEY,
    key      text COLLATE "C" NOT NULL,
    -- attached is false once the session is detached from its key.
    attached boolean NOT NULL DEFAULT true,
    -- meta is the session as JSON without its messages. JSON is kept as
    -- bytes (bytea), exactly as encoded: jsonb refuses \u0000, which a
    -- transcript may hold.
    meta     bytea NOT NULL,
    messages integer NOT NULL DEFAULT 0,
    created  bigint NOT NULL,
    updated  bigint NOT NULL
);
CREATE UNIQUE INDEX sessions_key ON sessions (key) WHERE attached;
CREATE INDEX sessions_updated ON sessions (updated);

-- One row per message (its JSON); a transcript only grows.
CREATE TABLE messages (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx        integer NOT NULL,
    body       bytea NOT NULL,
    PRIMARY KEY (session_id, idx)
);

CREATE TABLE outputs (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path       text NOT NULL,
    version    integer NOT NULL,
    size       bigint NOT NULL,
    time       timestamptz NOT NULL,
    data       bytea NOT NULL,
    PRIMARY KEY (session_id, path, version)
);

-- Dedupe marks: a unique key with its expiry.
CREATE TABLE seen (
    key     text COLLATE "C" PRIMARY KEY,
    expires bigint NOT NULL
);
CREATE INDEX seen_expires ON seen (expires);

-- The inbound queue every replica shares.
CREATE TABLE queue (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key text COLLATE "C" NOT NULL,
    payload     bytea NOT NULL,
    enqueued    bigint NOT NULL
);
CREATE INDEX queue_key ON queue (session_key, seq);

CREATE TABLE channel_defaults (
    team     text COLLATE "C" NOT NULL,
    channel  text COLLATE "C" NOT NULL,
    agent_id text NOT NULL,
    PRIMARY KEY (team, channel)
);

CREATE TABLE daily_usage (
    team   text COLLATE "C" NOT NULL,
    day    text COLLATE "C" NOT NULL,
    tokens bigint NOT NULL,
    PRIMARY KEY (team, day)
);

-- A thread is worked by one replica at a time.
CREATE TABLE leases (
    key     text COLLATE "C" PRIMARY KEY,
    holder  text NOT NULL,
    expires timestamptz NOT NULL
);
