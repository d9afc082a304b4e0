package main

import (
	"strings"

	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// stpectlCommand is a stpectl command line, ready to paste, that counts
// the tasks of prefix on the Redis conn reaches. It never holds a
// password: an address with credentials is given without them, and the
// command reads them from STPE_REDIS_USERNAME and STPE_REDIS_PASSWORD,
// which the operator sets.
func stpectlCommand(conn redisconn.Config, prefix string) string {
	addr := conn.Addr
	env := ""
	if redacted := redisconn.Redact(addr); redacted != addr || conn.Password != "" {
		addr = strings.Replace(redacted, "***@", "", 1)
		env = "STPE_REDIS_PASSWORD=... "
	}
	cmd := env + "stpectl -redis " + shellQuote(addr)
	if conn.Cluster {
		cmd += " -cluster"
	}
	if conn.SentinelMaster != "" {
		cmd += " -sentinel-master " + shellQuote(conn.SentinelMaster)
	}
	return cmd + " -prefix " + shellQuote(prefix) + " counts"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:,/_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
