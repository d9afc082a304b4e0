
local function publish_pending(channel, due, kind, id)
  redis.call('SPUBLISH', channel, due .. ' ' .. kind .. ' ' .. id)
end
local function publish_many(channel, entries)
  redis.call('SPUBLISH', channel, 'many ' .. table.concat(entries, ' '))
end
local function publish_claimed(channel, id)
  redis.call('SPUBLISH', channel, 'claimed ' .. id)
end
local function publish_canceled(channel, id)
  redis.call('SPUBLISH', channel, 'canceled ' .. id)
end
