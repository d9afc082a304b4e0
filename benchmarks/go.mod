module github.com/go-stpe/scheduler/benchmarks

go 1.25

require (
	github.com/adhocore/gronx v1.20.4
	github.com/go-co-op/gocron/v2 v2.21.2
	github.com/go-stpe/scheduler v0.1.0
	github.com/go-stpe/scheduler/cluster v0.1.0
	github.com/hibiken/asynq v0.26.0
	github.com/jonboulle/clockwork v0.5.0
	github.com/netresearch/go-cron v0.9.1
	github.com/redis/go-redis/v9 v9.22.0
	github.com/reugn/go-quartz v0.15.2
	github.com/robfig/cron/v3 v3.0.1
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/sys v0.37.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

// benchmarks is not published: it builds against the working tree, under
// go.work and without it.
replace (
	github.com/go-stpe/scheduler => ../
	github.com/go-stpe/scheduler/cluster => ../cluster
)
