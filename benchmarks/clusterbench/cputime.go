package main

import (
	"context"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// processCPU returns the user and system CPU time this process has used
// (the benchmarks command's cputime_unix.go does the same; this is its own
// main package).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU returns the CPU time redis-server has used, from INFO cpu.
func redisCPU(rdb *redis.Client) time.Duration {
	info, err := rdb.InfoMap(context.Background(), "cpu").Result()
	if err != nil {
		return -1
	}
	var total float64
	for _, k := range []string{"used_cpu_sys", "used_cpu_user"} {
		f, _ := strconv.ParseFloat(info["CPU"][k], 64)
		total += f
	}
	return time.Duration(total * float64(time.Second))
}
