-- How a subagent run's parent receives its result: 'wait' (task) or 'background'
-- (subagent_start). NULL for top-level runs. Recovery after a crash reads it to write the
-- completion notice of a background child cut off by the stop.
ALTER TABLE runs ADD COLUMN delivery TEXT CHECK (delivery IN ('wait', 'background'));
