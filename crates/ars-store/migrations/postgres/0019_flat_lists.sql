-- Lists that cost what the viewer sees, not what the tables hold: the rows each visibility
-- reason selects are found by an index (public rows here; the owner's and the share tables'
-- by user already), and the threads where one of a user's runs waits for a decision without
-- reading all of that user's runs.
CREATE INDEX agents_public ON agents (id) WHERE visibility = 'public';
CREATE INDEX skills_public ON skills (id) WHERE visibility = 'public';
CREATE INDEX mcp_servers_public ON mcp_servers (id) WHERE visibility = 'public';
CREATE INDEX knowledge_bases_public ON knowledge_bases (id) WHERE visibility = 'public';
CREATE INDEX runs_waiting_user ON runs (user_id) WHERE status = 'waiting';
