package redisdriver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Observe is told of every script call of a driver: the command
// (EVALSHA, EVAL ...), the script's name (ScriptName), how long the call
// took (for a pipelined one, the pipeline's round trip) and its error.
type Observe func(command, script string, took time.Duration, err error)

// observedRedis is the driver's client when the caller wants to observe
// Redis calls: it times every script call (go-redis's Script.Run calls EvalSha,
// then Eval on a NOSCRIPT error), and passes everything else through.
type observedRedis struct {
	redis.UniversalClient
	report Observe
}

// observeRedis returns rdb itself when report is nil, so that a node
// without an observer calls Redis directly.
func observeRedis(rdb redis.UniversalClient, report Observe) redis.UniversalClient {
	if report == nil {
		return rdb
	}
	return observedRedis{UniversalClient: rdb, report: report}
}

func (c observedRedis) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return observedScripter{Scripter: c.UniversalClient, report: c.report}.EvalSha(ctx, sha1, keys, args...)
}

func (c observedRedis) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return observedScripter{Scripter: c.UniversalClient, report: c.report}.Eval(ctx, script, keys, args...)
}

func (c observedRedis) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	start := time.Now()
	cmd := c.UniversalClient.EvalShaRO(ctx, sha1, keys, args...)
	c.done("EVALSHA_RO", sha1, start, cmd.Err())
	return cmd
}

func (c observedRedis) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	start := time.Now()
	cmd := c.UniversalClient.EvalRO(ctx, script, keys, args...)
	c.done("EVAL_RO", redis.NewScript(script).Hash(), start, cmd.Err())
	return cmd
}

// Pipeline returns a pipeline whose scripts are reported when it runs,
// each with the pipeline's round trip as its duration.
func (c observedRedis) Pipeline() redis.Pipeliner {
	return observedPipeline{Pipeliner: c.UniversalClient.Pipeline(), client: c}
}

// observedPipeline reports the scripts of a pipeline (the pipelined
// scripts, the sweep) when it runs.
type observedPipeline struct {
	redis.Pipeliner
	client observedRedis
}

func (p observedPipeline) Exec(ctx context.Context) ([]redis.Cmder, error) {
	start := time.Now()
	cmds, err := p.Pipeliner.Exec(ctx)
	for _, cmd := range cmds {
		args := cmd.Args()
		if len(args) < 2 {
			continue
		}
		switch name := strings.ToUpper(cmd.Name()); name {
		case "EVALSHA", "EVALSHA_RO":
			sha, _ := args[1].(string)
			p.client.done(name, sha, start, cmd.Err())
		case "EVAL", "EVAL_RO":
			src, _ := args[1].(string)
			p.client.done(name, redis.NewScript(src).Hash(), start, cmd.Err())
		}
	}
	return cmds, err
}

// done reports one script call.
func (c observedRedis) done(command, sha string, start time.Time, err error) {
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	c.report(command, ScriptName(sha), time.Since(start), err)
}

// observedScripter times the script calls go-redis's Script.Run makes,
// EVALSHA and, on a NOSCRIPT error, EVAL, on the driver's client
// (observedRedis) or on a connection of its (a master's, for replica
// acknowledgements) when the caller observes Redis calls.
type observedScripter struct {
	redis.Scripter
	report Observe
}

func (c observedScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	start := time.Now()
	cmd := c.Scripter.EvalSha(ctx, sha1, keys, args...)
	observedRedis{report: c.report}.done("EVALSHA", sha1, start, cmd.Err())
	return cmd
}

func (c observedScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	start := time.Now()
	cmd := c.Scripter.Eval(ctx, script, keys, args...)
	observedRedis{report: c.report}.done("EVAL", redis.NewScript(script).Hash(), start, cmd.Err())
	return cmd
}

// observed is s, a connection of the driver's, observed as the driver's
// client is (Options.Observe), or s itself if the client is not.
func (d *Driver) observed(s redis.Scripter) redis.Scripter {
	if o, ok := d.rdb.(observedRedis); ok {
		return observedScripter{Scripter: s, report: o.report}
	}
	return s
}
