package main

import (
	"context"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
)

// asynqLateness runs the stream on 3 asynq servers; a zero interval keeps
// asynq's default (DelayedTaskCheckInterval 5 s, TaskCheckInterval 1 s).
// The due time travels in the payload.
func asynqLateness(addr string, w workload, delayedCheck, taskCheck time.Duration) ([]time.Duration, time.Duration, error) {
	rec := newRecorder(w.rate * w.seconds)
	mux := asynq.NewServeMux()
	mux.HandleFunc("bench", func(_ context.Context, t *asynq.Task) error {
		due := time.Unix(0, int64(binary.BigEndian.Uint64(t.Payload())))
		rec.add(time.Since(due))
		return nil
	})
	var servers []*asynq.Server
	defer func() {
		for _, s := range servers {
			s.Shutdown()
		}
	}()
	for range 3 {
		s := asynq.NewServer(asynq.RedisClientOpt{Addr: addr}, asynq.Config{
			Concurrency:              16,
			DelayedTaskCheckInterval: delayedCheck,
			TaskCheckInterval:        taskCheck,
			LogLevel:                 asynq.ErrorLevel,
		})
		if err := s.Start(mux); err != nil {
			return nil, 0, err
		}
		servers = append(servers, s)
	}
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: addr})
	defer client.Close()
	lag, err := produce(w, func(due time.Time) error {
		p := binary.BigEndian.AppendUint64(nil, uint64(due.UnixNano()))
		_, err := client.Enqueue(asynq.NewTask("bench", p), asynq.ProcessAt(due))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	late, err := rec.wait(w.delay + 30*time.Second)
	return late, lag, err
}

// asynqStore stores n tasks due in an hour through one client.
func asynqStore(addr string, n int) (float64, error) {
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: addr, PoolSize: 32})
	defer client.Close()
	due := time.Now().Add(time.Hour)
	return storeConcurrently(n, func(i int) error {
		_, err := client.Enqueue(asynq.NewTask("bench", []byte(strconv.Itoa(i))), asynq.ProcessAt(due))
		return err
	})
}
