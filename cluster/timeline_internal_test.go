package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The scripts' late_bucket and latenessBucket must agree, and each
// bucket's upper bound must be within a quarter above any value in it.
func TestLatenessBucketsOfTheScriptsAndOfGoAgree(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	defer rdb.Close()
	sc := redis.NewScript(redisdriver.Source("lib/timeline.lua") + `
local out = {}
for i = 1, #ARGV do out[i] = late_bucket(tonumber(ARGV[i])) end
return out`)
	var values []any
	var want []int
	for _, us := range []int64{-5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 1000, 1023, 1024, 1279, 1280,
		2_000_000, 2_097_151, 2_097_152, 8_000_000, 16_777_216, 1 << 40} {
		values = append(values, us)
		want = append(want, latenessBucket(us))
		if b := latenessBucket(us); us > 0 && b < timelineBuckets-1 {
			up := latenessUpper(b)
			if got := time.Duration(us) * time.Microsecond; up < got || up > got*5/4+time.Microsecond {
				t.Errorf("bucket %d of %d µs has upper bound %v", b, us, up)
			}
		}
	}
	got, err := sc.Run(context.Background(), rdb, nil, values...).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if int(got[i]) != want[i] {
			t.Errorf("bucket of %v µs: script %d, Go %d", values[i], got[i], want[i])
		}
	}
}
