-- Sessions with a tool call waiting for approval, found without a scan.
ALTER TABLE sessions ADD COLUMN waiting boolean NOT NULL DEFAULT false;
CREATE INDEX sessions_waiting ON sessions (key) WHERE waiting AND attached;
