-- A message sent into a run while it was active (steering, or a completion notice that reached
-- a running parent) is marked: the model read it before its next model call.
ALTER TABLE messages ADD COLUMN steer BOOLEAN NOT NULL DEFAULT FALSE;
