
local function stored_kind()
  local kind = redis.call('HGET', TASK, 'kind')
  if not kind then return nil end
  if wrong_kind(kind) then return false, kind end
  return kind
end
