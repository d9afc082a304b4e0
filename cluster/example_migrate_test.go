package cluster_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
)

// Migrate moves the tasks an earlier version stored in its single-slot
// layout into the partitions, once every node of that version is stopped;
// the nodes of this version then start with the same WithPartitions.
// Interrupted, it is run again: nothing is lost or doubled. (Compiled, not
// run: it needs a Redis server.)
func ExampleMigrate() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	r, err := cluster.Migrate(ctx, rdb, cluster.WithPrefix("{scheduler}"), cluster.WithPartitions(cluster.DefaultPartitions))
	if err != nil {
		log.Fatal(err) // run it again to finish
	}
	fmt.Printf("moved %d tasks (%d pending, %d running, %d dead, %d done) and %d done markers in %v\n",
		r.Tasks(), r.Pending, r.Running, r.Dead, r.Done, r.Markers, r.Elapsed)
}
