// Package redisconn turns an operator's description of a Redis deployment,
// given by command-line flags and the environment, into a go-redis
// client: one server, a Redis Cluster, or a master watched by Sentinel.
// stpectl and the dashboard's binary use it, so that every tool of the
// module reads the same flags and variables the same way; Redact keeps the
// credentials of a Redis URL out of whatever they print.
//
// # Addresses
//
// Config.Addr (the -redis flag) takes one of:
//
//	host:port                          one server
//	redis://[user:password@]host:port/db   one server (rediss:// for TLS)
//	unix:///path/to/redis.sock?db=N    one server over a Unix socket
//	host1:port1,host2:port2,...        a Redis Cluster: its seed addresses
//	redis+cluster://[user:password@]host:port?addr=host2:port2&addr=...
//	                                   a Redis Cluster (rediss+cluster:// for
//	                                   TLS); the query takes go-redis's
//	                                   ParseClusterURL parameters
//	redis+sentinel://[user:password@]host:port?master_name=M&addr=...
//	                                   a master watched by Sentinel: the
//	                                   URL names the sentinels (their
//	                                   credentials in the user information,
//	                                   the master's in the password
//	                                   parameter), as go-redis's
//	                                   ParseFailoverURL reads it
//
// Config.Cluster (-cluster) makes a Redis Cluster client of a single
// address too (host:port, or a redis:// URL read by ParseClusterURL).
// Config.SentinelMaster (-sentinel-master NAME) makes the addresses the
// sentinels of master NAME. The cluster module works over each of the
// three clients (cluster.New takes any redis.UniversalClient).
//
// # Environment
//
// FromEnv reads, in order of precedence for the address:
//
//	STPE_REDIS_URL             the address, in any form above
//	REDIS_URL                  the address, when STPE_REDIS_URL is unset
//	STPE_REDIS_CLUSTER         "1" or "true": as -cluster
//	STPE_REDIS_SENTINEL_MASTER as -sentinel-master
//	STPE_REDIS_USERNAME        the user name, when the address has none
//	STPE_REDIS_PASSWORD        the password, when the address has none
//
// and defaults the address to localhost:6379. A password in
// STPE_REDIS_PASSWORD stays out of the process list and the shell's
// history, where a URL on the command line is seen.
//
// # Secrets
//
// Redact removes the user name and password of every Redis URL in a
// string (and the password parameters of its query), so an address can
// be printed, logged or put into an error. Config.String is the address
// redacted. It covers PostgreSQL's URLs and connection strings of
// keywords too (password=, sslpassword=), so that a tool that reaches
// either store redacts all it writes with one function.
package redisconn
