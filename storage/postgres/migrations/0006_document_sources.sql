-- Where each version of a document was written from (DocVersion.Source:
-- "team/channel", '' for no channel, '?' when it cannot be known), kept for
-- good: a project's privacy comes from every channel that ever wrote to it.
-- NULL marks a version an older agentbot wrote: Open gives those the
-- source storage.LegacySource finds from their thread or their session's
-- key (backfillSources), and ProjectSources reads any written since the
-- same way.
ALTER TABLE documents ADD COLUMN source text COLLATE "C";
ALTER TABLE document_heads ADD COLUMN source text COLLATE "C";
CREATE INDEX documents_source ON documents (project, source);
-- The versions still without a source, so that finding them is cheap when
-- there are none.
CREATE INDEX documents_unsourced ON documents (project) WHERE source IS NULL;
