-- The MCP servers a channel adds to its agents' tools (/agent tools add):
-- a sorted, deduplicated list, absent when none.
CREATE TABLE channel_tools (
    team    text COLLATE "C" NOT NULL,
    channel text COLLATE "C" NOT NULL,
    servers text[] NOT NULL,
    PRIMARY KEY (team, channel)
);
