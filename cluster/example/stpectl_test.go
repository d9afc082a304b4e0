package main

import (
	"testing"

	"github.com/go-stpe/scheduler/cluster/redisconn"
)

func TestStpectlCommandIsReadyToPasteAndHoldsNoPassword(t *testing.T) {
	for _, tc := range []struct {
		conn redisconn.Config
		want string
	}{
		{redisconn.Config{Addr: "127.0.0.1:6379"}, "stpectl -redis 127.0.0.1:6379 -prefix '{example}' counts"},
		{redisconn.Config{Addr: "redis://admin:s3cret@db:6379/0"}, "STPE_REDIS_PASSWORD=... stpectl -redis redis://db:6379/0 -prefix '{example}' counts"},
		{redisconn.Config{Addr: "db:6379", Password: "s3cret"}, "STPE_REDIS_PASSWORD=... stpectl -redis db:6379 -prefix '{example}' counts"},
		{redisconn.Config{Addr: "a:7000,b:7001"}, "stpectl -redis a:7000,b:7001 -prefix '{example}' counts"},
		{redisconn.Config{Addr: "a:7000", Cluster: true}, "stpectl -redis a:7000 -cluster -prefix '{example}' counts"},
		{redisconn.Config{Addr: "s:26379", SentinelMaster: "my master"}, "stpectl -redis s:26379 -sentinel-master 'my master' -prefix '{example}' counts"},
		{redisconn.Config{Addr: "redis+cluster://a:7000?addr=b:7001"}, "stpectl -redis 'redis+cluster://a:7000?addr=b:7001' -prefix '{example}' counts"},
	} {
		if got := stpectlCommand(tc.conn, prefix); got != tc.want {
			t.Errorf("stpectlCommand(%s) = %q\nwant %q", tc.conn, got, tc.want)
		}
	}
}
