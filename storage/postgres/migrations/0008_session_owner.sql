-- The person a session belongs to (transcript.Session.Owner), indexed so a
-- person's sessions are listed without reading every session
-- (PersonSessions: the Home tab). '' is a session with no owner (the
-- terminal's); NULL marks a row an older agentbot wrote: Open gives those
-- the owner storage.OwnerOf reads from their metadata (backfillOwners).
ALTER TABLE sessions ADD COLUMN owner text COLLATE "C";
CREATE INDEX sessions_owner ON sessions (owner, updated DESC) WHERE attached AND owner <> '';
-- The rows still without an owner, so that finding them is cheap when
-- there are none.
CREATE INDEX sessions_unowned ON sessions (id) WHERE owner IS NULL;
