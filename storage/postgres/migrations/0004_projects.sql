-- Projects: shared, versioned documents of the threads of their channels.
CREATE TABLE projects (
    name    text COLLATE "C" PRIMARY KEY,
    owner   text NOT NULL DEFAULT '',
    created timestamptz NOT NULL
);

-- A channel ("team/channel") bound to a named project; a channel without
-- a row is its own project.
CREATE TABLE project_channels (
    channel text COLLATE "C" PRIMARY KEY,
    project text COLLATE "C" NOT NULL REFERENCES projects (name) ON DELETE CASCADE
);
CREATE INDEX project_channels_project ON project_channels (project);

-- Every version of every document, with who wrote it and where.
CREATE TABLE documents (
    project text COLLATE "C" NOT NULL REFERENCES projects (name) ON DELETE CASCADE,
    path    text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    size    bigint NOT NULL,
    session text NOT NULL DEFAULT '',
    thread  text NOT NULL DEFAULT '',
    agent   text NOT NULL DEFAULT '',
    person  text NOT NULL DEFAULT '',
    time    timestamptz NOT NULL,
    data    bytea NOT NULL,
    PRIMARY KEY (project, path, version)
);

-- The latest version of each document, its record repeated so a listing
-- reads one table: the row a save locks.
CREATE TABLE document_heads (
    project text COLLATE "C" NOT NULL REFERENCES projects (name) ON DELETE CASCADE,
    path    text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    size    bigint NOT NULL DEFAULT 0,
    session text NOT NULL DEFAULT '',
    thread  text NOT NULL DEFAULT '',
    agent   text NOT NULL DEFAULT '',
    person  text NOT NULL DEFAULT '',
    time    timestamptz NOT NULL,
    PRIMARY KEY (project, path)
);
CREATE INDEX document_heads_recent ON document_heads (project, time DESC);

-- The documents sessions saved before become versions of their key's
-- default project (storage.ProjectOfKey: "team/channel/thread" is the
-- channel's, anything else the terminal's), in time order, credited to
-- their session, thread, agent and owner. Files people shared (paths starting with "/")
-- stay the session's.
CREATE TEMPORARY TABLE old_docs ON COMMIT DROP AS
SELECT CASE WHEN array_length(string_to_array(s.key, '/'), 1) = 3
              AND split_part(s.key, '/', 1) NOT IN ('chat', '')
              AND split_part(s.key, '/', 2) <> ''
            THEN 'channel/' || split_part(s.key, '/', 1) || '/' || split_part(s.key, '/', 2)
            ELSE 'terminal' END AS project,
       o.path, o.size, o.session_id, s.key, o.time, o.data, o.version AS old_version,
       coalesce(substring(convert_from(s.meta, 'UTF8') from '"agent_id":"([^"\\]*)"'), '') AS agent,
       coalesce(substring(convert_from(s.meta, 'UTF8') from '"bot.owner":"([^"\\]*)"'), '') AS person
FROM outputs o JOIN sessions s ON s.id = o.session_id
WHERE o.path NOT LIKE '/%';

INSERT INTO projects (name, created)
SELECT project, min(time) FROM old_docs GROUP BY project;

INSERT INTO documents (project, path, version, size, session, thread, agent, person, time, data)
SELECT project, path,
       row_number() OVER (PARTITION BY project, path ORDER BY time, session_id, old_version),
       size, session_id, key, agent, person, time, data
FROM old_docs;

INSERT INTO document_heads (project, path, version, size, session, thread, agent, person, time)
SELECT DISTINCT ON (project, path) project, path, version, size, session, thread, agent, person, time
FROM documents ORDER BY project, path, version DESC;
