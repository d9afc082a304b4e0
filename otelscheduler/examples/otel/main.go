// Command otel runs a few jobs on a scheduler instrumented by otelscheduler
// and serves their metrics in the Prometheus text format, through the
// OpenTelemetry Prometheus exporter:
//
//	cd otelscheduler && go run ./examples/otel
//	curl -s localhost:2112/metrics | grep ^scheduler_
//
// The jobs: "heartbeat" every second, "report" every two seconds after the
// last one ended, failing one run in three (and going on: ContinueOnError),
// and "cleanup" every five seconds with up to a second of jitter, which is
// not counted as lateness. It stops on Ctrl-C. Spans go to the global
// TracerProvider, a no-op here: a real program sets one with an exporter.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
)

func main() {
	d, err := start(":2112", nil)
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

// demo is the running program: the scheduler and its jobs, the metrics
// pipeline and the HTTP server.
type demo struct {
	addr   string // where the server listens, host:port
	s      *scheduler.Scheduler
	inst   *otelscheduler.Instrumentation
	mp     *sdkmetric.MeterProvider
	srv    *http.Server
	served chan error // receives Serve's error once it returns
}

// start builds the pipeline, the scheduler on clk (nil: the system clock)
// with its jobs, and serves /metrics on addr.
func start(addr string, clk scheduler.Clock) (*demo, error) {
	reg := promclient.NewRegistry()
	exporter, err := prometheus.New(prometheus.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	d := &demo{mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))}
	d.s, d.inst, err = otelscheduler.NewScheduler(2, []scheduler.Option{scheduler.WithClock(clk)},
		otelscheduler.WithMeterProvider(d.mp), otelscheduler.WithSchedulerName("demo"))
	if err == nil {
		err = scheduleJobs(d.s)
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

// scheduleJobs schedules the demo's three jobs.
func scheduleJobs(s *scheduler.Scheduler) error {
	heartbeat := func(context.Context) error { return nil }
	runs := 0 // report's; its runs never overlap, each happens before the next
	report := func(context.Context) error {
		runs++
		if runs%3 == 0 {
			return fmt.Errorf("report %d: upstream unavailable", runs)
		}
		return nil
	}
	cleanup := func(context.Context) error { return nil }
	_, err1 := s.ScheduleAtFixedRate(heartbeat, time.Second, time.Second, scheduler.WithName("heartbeat"))
	_, err2 := s.ScheduleWithFixedDelay(report, 2*time.Second, 2*time.Second,
		scheduler.WithName("report"), scheduler.ContinueOnError())
	_, err3 := s.ScheduleAtFixedRate(cleanup, 5*time.Second, 5*time.Second,
		scheduler.WithName("cleanup"), scheduler.WithJitter(time.Second))
	return errors.Join(err1, err2, err3)
}

// close stops everything start started, in order: the server, the
// scheduler (waiting for its runs), the instrumentation, the pipeline.
func (d *demo) close(ctx context.Context) error {
	var errs []error
	if d.srv != nil {
		errs = append(errs, d.srv.Shutdown(ctx))
		if err := <-d.served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if d.s != nil {
		d.s.Shutdown()
		errs = append(errs, d.s.AwaitTermination(ctx))
	}
	if d.inst != nil {
		errs = append(errs, d.inst.Shutdown())
	}
	errs = append(errs, d.mp.Shutdown(ctx))
	return errors.Join(errs...)
}
