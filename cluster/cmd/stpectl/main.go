package main

import (
	"context"
	"os"

	"github.com/redis/go-redis/v9"
)

func main() {
	// go-redis logs its connection retries itself; the command's error
	// already says what failed, once.
	redis.SetLogger(quietLogger{})
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// quietLogger drops go-redis's own log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
