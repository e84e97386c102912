-- Fencing: a lease carries a token that grows with every take (from one
-- sequence for every key), and each write a replica makes for a thread is
-- checked against it.
CREATE SEQUENCE lease_tokens;
ALTER TABLE leases ADD COLUMN token bigint NOT NULL DEFAULT nextval('lease_tokens');

-- Order: a thread's items are worked by Slack's message ts (microseconds),
-- then by seq; items queued before this migration keep their order.
ALTER TABLE queue ADD COLUMN ord bigint;
UPDATE queue SET ord = enqueued / 1000;
ALTER TABLE queue ALTER COLUMN ord SET NOT NULL;
DROP INDEX queue_key;
CREATE INDEX queue_key ON queue (session_key, ord, seq);

-- The database's clock in Unix nanoseconds: dedupe marks and queue times
-- are read on it, so a replica's clock cannot re-admit an event.
CREATE FUNCTION agentbot_now_ns() RETURNS bigint LANGUAGE sql VOLATILE AS
$$ SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000 $$;
