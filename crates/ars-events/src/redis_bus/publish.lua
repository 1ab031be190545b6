-- Appends one event to a run's stream. One script, so the closed check, the id and the append
-- are atomic across every instance: concurrent publishers get dense ids, appended in order.
--
-- KEYS[1]  the run's stream
-- ARGV[1]  the event's JSON (without its id: the entry id is the event id)
-- ARGV[2]  '1' when this is the run's terminal event
-- ARGV[3]  most entries to keep (exact MAXLEN, so resume from a dropped event is refused)
-- ARGV[4]  retention after the terminal event, in milliseconds
--
-- Returns the new event id, or -1 when the run has already ended.
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
local id = 1
if last then
  local fields = last[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'terminal' then
      return -1
    end
  end
  -- Entry ids are '0-<event id>'; the last one is the counter, so no second key can drift.
  id = tonumber(string.match(last[1], '^0%-(%d+)$')) + 1
end
if ARGV[2] == '1' then
  redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[3], '0-' .. id, 'event', ARGV[1], 'terminal', '1')
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
else
  redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[3], '0-' .. id, 'event', ARGV[1])
end
return id
