package cluster

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// migrateTasks is how many tasks BenchmarkMigrate moves per run:
//
//	go test -run '^$' -bench BenchmarkMigrate -benchtime 1x -migrate.tasks 1000000 ./
var migrateTasks = flag.Int("migrate.tasks", 100000, "tasks BenchmarkMigrate writes in the old layout and moves per run")

// BenchmarkMigrate moves -migrate.tasks tasks, written in the old layout
// in every state (with done markers and a paused kind, as seedOld writes
// them), into the default number of partitions, on one redis-server and
// on a three-master Redis Cluster. It reports the tasks moved per second
// and the seconds per run.
func BenchmarkMigrate(b *testing.B) {
	b.Run("redis-server", func(b *testing.B) {
		srv := redistest.Start(b, redistest.Options{})
		rdb := srv.Client()
		b.Cleanup(func() { _ = rdb.Close() })
		benchmarkMigrate(b, rdb, func() error { return rdb.FlushAll(context.Background()).Err() })
	})
	b.Run("cluster", func(b *testing.B) {
		c := redistest.StartCluster(b, redistest.ClusterOptions{})
		rdb := c.Client()
		b.Cleanup(func() { _ = rdb.Close() })
		benchmarkMigrate(b, rdb, func() error {
			return rdb.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
				return m.FlushAll(ctx).Err()
			})
		})
	})
}

func benchmarkMigrate(b *testing.B, rdb redis.UniversalClient, flush func() error) {
	ctx := context.Background()
	n := *migrateTasks
	var elapsed time.Duration
	b.StopTimer()
	for range b.N {
		if err := flush(); err != nil {
			b.Fatal(err)
		}
		ks := seedOld(b, rdb, "{bench}", n)
		b.StartTimer()
		start := time.Now()
		r, err := Migrate(ctx, rdb, WithPrefix("{bench}"))
		elapsed += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if r.Tasks() != len(ks.tasks)+len(ks.stray) || r.Markers != len(ks.markers) {
			b.Fatalf("moved %+v of %d tasks and %d markers", r, len(ks.tasks)+len(ks.stray), len(ks.markers))
		}
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "tasks/s")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/run")
}
