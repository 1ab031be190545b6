-- A run being executed is held by a lease: the executing instance and when the lease runs out
-- (Unix milliseconds, renewed by that instance's heartbeat). Recovery in a scaled deployment
-- interrupts only active runs whose lease has run out, never another live instance's runs.
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_ms BIGINT;
CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE status IN ('pending', 'running');
