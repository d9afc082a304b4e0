module github.com/go-stpe/scheduler/examples/dashboard

go 1.25

require (
	github.com/go-stpe/scheduler v0.1.0
	github.com/go-stpe/scheduler/cluster v0.1.0
	github.com/go-stpe/scheduler/dashboard v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)

// The example is not published: it builds against the working tree, under
// go.work and without it.
replace (
	github.com/go-stpe/scheduler => ../../
	github.com/go-stpe/scheduler/cluster => ../../cluster
	github.com/go-stpe/scheduler/dashboard => ../../dashboard
)
