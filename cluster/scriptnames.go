package cluster

import "github.com/go-stpe/scheduler/cluster/internal/redisdriver"

// ScriptNames names the store's Lua scripts by their SHA-1, as Redis
// shows them: EVALSHA's first argument in SLOWLOG, MONITOR and CLIENT
// LIST, and the sha1 of a script in SCRIPT EXISTS. The names are those
// Observer.RedisCall reports ("schedule", "claim", "complete" ...). The
// map is a copy: changing it changes nothing here.
func ScriptNames() map[string]string { return redisdriver.ScriptNames() }
