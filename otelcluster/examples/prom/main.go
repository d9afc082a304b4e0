// Command prom runs a cluster node instrumented by otelcluster and serves
// its metrics in the Prometheus text format, through the OpenTelemetry
// Prometheus exporter:
//
//	cd otelcluster && go run ./examples/prom -redis localhost:6379
//	curl -s localhost:2113/metrics | grep -E '^(scheduler_cluster|db_client)'
//
// The work: a cluster-once periodic task "tick" every second, whose runs
// schedule a "mail" task (which succeeds) and a "report" task (whose first
// run fails one time in three, and is retried). Every run is a span linked
// to the span that scheduled its task (the tick's run), handed to the
// global TracerProvider's SDK: a real program gives it an exporter. Run
// several copies on one Redis and each tick runs once across them. It
// stops on Ctrl-C.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster"
)

func main() {
	listen := flag.String("listen", ":2113", "where /metrics is served")
	redisAddr := flag.String("redis", "localhost:6379", "the Redis server, host:port")
	flag.Parse()
	d, err := start(*listen, config{redisAddr: *redisAddr, tick: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving http://%s/metrics; Ctrl-C stops", d.addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-d.served:
		log.Print(err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.close(shutdownCtx); err != nil {
		log.Fatal(err)
	}
}

// config is what start needs besides the listen address.
type config struct {
	redisAddr string
	tick      time.Duration // the tick's period
	nodeOpts  []cluster.Option
}

// demo is the running program: the node and its work, the pipelines and
// the HTTP server.
type demo struct {
	addr   string // where the server listens, host:port
	rdb    *redis.Client
	n      *cluster.Node
	inst   *otelcluster.Instrumentation
	mp     *sdkmetric.MeterProvider
	tp     *sdktrace.TracerProvider
	srv    *http.Server
	served chan error // receives Serve's error once it returns
}

// start builds the pipelines, the instrumented node with its work, starts
// it, and serves /metrics on addr.
func start(addr string, cfg config) (*demo, error) {
	reg := promclient.NewRegistry()
	exporter, err := prometheus.New(prometheus.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	d := &demo{
		rdb: redis.NewClient(&redis.Options{Addr: cfg.redisAddr, PoolSize: 32}),
		mp:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)),
		tp:  sdktrace.NewTracerProvider(),
	}
	nodeOpts := append([]cluster.Option{
		cluster.WithPrefix("{otelcluster-demo}"),
		cluster.WithLogger(slog.New(slog.DiscardHandler)),
		cluster.WithBackoff(func(int) time.Duration { return 500 * time.Millisecond }),
	}, cfg.nodeOpts...)
	d.n, d.inst, err = otelcluster.NewNode(d.rdb, nodeOpts,
		otelcluster.WithMeterProvider(d.mp), otelcluster.WithTracerProvider(d.tp))
	if err == nil {
		err = declareWork(d.n, cfg.tick)
	}
	if err == nil {
		err = d.n.Start(context.Background())
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return nil, errors.Join(err, d.close(context.Background()))
	}
	d.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	d.served = make(chan error, 1)
	go func() { d.served <- d.srv.Serve(ln) }()
	return d, nil
}

// declareWork registers the kinds and declares the periodic tick.
func declareWork(n *cluster.Node, tick time.Duration) error {
	var reports atomic.Int64 // numbers the report tasks' first runs
	err1 := n.Handle("mail", func(context.Context, cluster.Task) error { return nil })
	err2 := n.Handle("report", func(_ context.Context, t cluster.Task) error {
		if t.Attempt == 0 && reports.Add(1)%3 == 0 {
			return fmt.Errorf("report %s: upstream unavailable", t.ID)
		}
		return nil
	})
	every := scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Truncate(tick).Add(tick) })
	err3 := n.Periodic("tick", every, func(ctx context.Context, t cluster.Task) error {
		// ctx carries the tick's run span: the tasks scheduled here
		// store it, and their runs' spans link to it.
		_, err1 := n.Schedule(ctx, "mail", []byte(t.ID), time.Now())
		_, err2 := n.Schedule(ctx, "report", []byte(t.ID), time.Now())
		return errors.Join(err1, err2)
	})
	return errors.Join(err1, err2, err3)
}

// close stops everything start started, in order: the server, the node
// (waiting for its runs), the instrumentation, the pipelines, the client.
func (d *demo) close(ctx context.Context) error {
	var errs []error
	if d.srv != nil {
		errs = append(errs, d.srv.Shutdown(ctx))
		if err := <-d.served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if d.n != nil {
		errs = append(errs, d.n.Stop(ctx))
	}
	if d.inst != nil {
		errs = append(errs, d.inst.Shutdown())
	}
	errs = append(errs, d.mp.Shutdown(ctx), d.tp.Shutdown(ctx), d.rdb.Close())
	return errors.Join(errs...)
}
