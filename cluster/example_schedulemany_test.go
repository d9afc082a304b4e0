package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
)

// Storing a day's reminders in one call: each task gets its own result,
// so a bad one or one whose ID holds another task is reported alone, and
// the call can be repeated safely since every task has an ID. (Compiled,
// not run: it needs a Redis server.)
func ExampleNode_ScheduleMany() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	node, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	defer node.StopNow()
	start := time.Now().Truncate(time.Hour).Add(time.Hour)
	var batch []cluster.ScheduleManyParams
	for h := range 24 {
		batch = append(batch, cluster.ScheduleManyParams{
			Kind:    "reminder",
			Payload: []byte(fmt.Sprintf(`{"hour":%d}`, h)),
			Due:     start.Add(time.Duration(h) * time.Hour),
			Opts:    []cluster.ScheduleOption{cluster.WithID(fmt.Sprintf("reminder-%s-%02d", start.Format(time.DateOnly), h))},
		})
	}
	results, err := node.ScheduleMany(context.Background(), batch)
	if err != nil {
		log.Print(err) // how many were not stored, and the first one's error
	}
	for i, r := range results {
		switch {
		case errors.Is(r.Err, cluster.ErrIDConflict):
			log.Printf("task %d: its ID holds another task", i)
		case errors.Is(r.Err, scheduler.ErrInvalidArgument):
			log.Printf("task %d refused: %v", i, r.Err)
		case r.Err != nil:
			log.Printf("task %d: try again: %v", i, r.Err) // Redis failed: the ID makes a retry safe
		}
	}
}
