package main

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

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
