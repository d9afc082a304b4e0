// Command stpectl is the operators' command-line tool for the durable tasks
// of the cluster module (github.com/go-stpe/scheduler/cluster): it lists,
// shows and counts the tasks a cluster keeps in Redis or in PostgreSQL
// (the Postgres driver, module cluster/pgdriver), and runs, retries,
// reschedules, cancels, deletes and purges them, pauses and resumes kinds,
// lists the live nodes and the periodic tasks they declare, and checks the
// whole. It is the counterpart of asynq's CLI (asynq task ls,
// asynq queue pause) and River's.
//
// It is a module of its own (github.com/go-stpe/scheduler/cluster/cmd/stpectl),
// so that the cluster module does not require pgx. Install it with
//
//	go install github.com/go-stpe/scheduler/cluster/cmd/stpectl@latest
//
// once a version is published; until then, from a clone of the
// repository, "go install ." in its folder cluster/cmd/stpectl.
//
// Usage:
//
//	stpectl [global flags] COMMAND [flags] [arguments]
//
// The commands:
//
//	list [-state pending|running|dead|done] [-kind K] [-limit N] [-cursor C] [-full]
//	show [-full] ID
//	counts
//	run ID | -all [-state pending] [-kind K] [-before TIME] [-dry-run]
//	retry ID | -all [-state dead] [-kind K] [-before TIME] [-dry-run]
//	reschedule ID TIME
//	cancel ID | -all -state S [-kind K] [-before TIME] [-dry-run]
//	delete ID | -all [-state dead|done] [-kind K] [-before TIME] [-dry-run]
//	purge [-state dead|done] [-kind K] [-dry-run] -before TIME | -older DURATION
//	pause KIND
//	resume KIND
//	nodes
//	periodic
//	health [-min-nodes N]
//	migrate [-partitions N] [-force]    (Redis; on PostgreSQL: migrate)
//
// With -all, run, retry, cancel and delete act on every task the
// selection picks (the cluster module's RunNowAll, RetryAll, CancelAll and
// DeleteAll); -dry-run counts them and changes nothing (CountSelected).
//
// list prints a page and the cursor of the next one ("next: C"; with -json
// the field next), which -cursor takes to go on. A TIME is RFC 3339
// (2026-11-25T10:00:00Z) or a duration from now (+10m, -2h, +1d; for
// reschedule, 10m is from now too); a DURATION counts hours, minutes,
// seconds and days (90s, 72h, 7d). An argument that starts with "-" goes
// after "--". Times print beside how far they are from now ("in 4m10s",
// "3h5m ago").
//
// The global flags, accepted before or after the command:
//
//	-redis ADDR     host:port; a redis:// (rediss://, unix://) URL; a Redis
//	                Cluster's seeds host:port,host:port or a
//	                redis+cluster:// URL; sentinels with -sentinel-master
//	                or a redis+sentinel:// URL (package redisconn); default
//	                $STPE_REDIS_URL, then $REDIS_URL, then localhost:6379
//	-cluster        the address is a Redis Cluster's, even one seed
//	                (default $STPE_REDIS_CLUSTER)
//	-sentinel-master NAME
//	                the master the sentinels at -redis watch (default
//	                $STPE_REDIS_SENTINEL_MASTER)
//	-postgres URL   a postgres:// (postgresql://) URL: the tasks are in
//	                that PostgreSQL database instead of Redis (package
//	                pgdriver/postgresconn); default $STPE_POSTGRES_URL
//	-prefix P       the key prefix given to cluster.WithPrefix (default
//	                cluster.DefaultPrefix, "{scheduler}"); Redis only
//	-json           one JSON document on stdout
//	-timeout D      give up after D (default 10s)
//
// STPE_REDIS_USERNAME and STPE_REDIS_PASSWORD authenticate when the
// address carries no credentials. No output of stpectl shows a password or
// a user name of an address: every address it prints, in text, JSON,
// errors and log lines, is redacted (redisconn.Redact, which knows Redis's
// and PostgreSQL's URLs); a PostgreSQL server's own refusal may name the
// user it refused ("password authentication failed for user ..."). A
// -prefix with no keyspace in Redis is an error naming the prefixes that
// have one (cluster.Keyspaces).
//
// # PostgreSQL
//
// The store is PostgreSQL when -postgres is given, or when
// $STPE_POSTGRES_URL is set and no -redis, -cluster or -sentinel-master
// is (both $STPE_REDIS_URL and $STPE_POSTGRES_URL set, with neither flag,
// is bad usage: say which); $DATABASE_URL is never read. The database
// (and the schema its search_path finds) is the keyspace: -prefix, with
// -cluster and -sentinel-master, is Redis's and refused with -postgres.
// Every command works on it as on Redis, through the cluster module's
// node on the Postgres driver (cluster.NewWithDriver), with the number of
// partitions the database records. migrate applies the driver's schema
// migrations (pgdriver.Migrate) and says from which version to which;
// its -partitions and -force are for Redis's layout migration and
// refused. A database without the cluster's tables, or with an older
// schema, is refused with the advice to run migrate. The password may
// stay off the command line in PGPASSWORD or ~/.pgpass, which pgx reads
// as libpq does.
//
// Every command works on a producer-only cluster.Node (never started, no
// handlers), so it never runs a task, and every action is the cluster
// module's own, one step of the store (a Lua script on Redis, a statement
// or transaction on PostgreSQL) that checks the task's state and changes
// it: stpectl never races a node's claim.
//
// Payloads show as the bytes they are: JSON as JSON (indented by show),
// UTF-8 made of printable characters as text, anything else as a hex dump
// (base64 in JSON) with a note, so that a payload never sends control
// sequences to the terminal; they are cut at 1024 bytes unless -full is
// given. A task's failed runs show against its retry limit.
//
// health is unhealthy (exit status 1) when the store does not answer or
// fewer than -min-nodes (default 1) live nodes are not stopping; it warns
// of the kinds with pending tasks that no live node handles.
//
// Errors are one line, "stpectl: COMMAND [ID or KIND]: WHY": the cluster
// module's refusal ("no such task"), or "redis ADDRESS: CAUSE" ("postgres
// HOST:PORT/DATABASE: CAUSE") when the store fails. The exit status is 0
// on success, 1 when the operation failed or was refused (no such task, a
// state that forbids it, no keyspace, the store unreachable), and 2 on bad
// usage (an unknown
// command, a bad flag, a malformed time or cursor), with a usage message.
// "stpectl help" and "stpectl help COMMAND" (or COMMAND -h) print the
// usage. With -json a failure also writes {"error": "...", "reason": R} to
// stdout, R being "usage", "not_found", "wrong_state", "no_keyspace",
// "unknown_kind" or "failed" (health
// writes its own report, with "ok": false, instead).
//
// docs/cluster.md, section "Command-line tool", gives an example of each
// command and the JSON documents' fields.
package main
