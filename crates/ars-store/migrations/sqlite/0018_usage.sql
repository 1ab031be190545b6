-- Usage by model and cost: the model each run talked to (`provider/model`, written with its
-- usage), the prices a provider's tokens cost (a JSON object: input and output per million
-- tokens), and an index for rolling a user's runs up by time.
ALTER TABLE runs ADD COLUMN model TEXT;
ALTER TABLE model_providers ADD COLUMN prices TEXT;
CREATE INDEX runs_user_created ON runs (user_id, created_at);
CREATE INDEX runs_created ON runs (created_at);
