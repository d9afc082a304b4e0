module github.com/go-stpe/scheduler/benchmarks/riverbench

go 1.26.0

// riverbench is a module of its own, outside go.work: River v0.51.2 needs
// Go 1.26, and the rest of the repository stays on 1.25. Run it with
// GOWORK=off.
replace (
	github.com/go-stpe/scheduler => ../../
	github.com/go-stpe/scheduler/cluster => ../../cluster
	github.com/go-stpe/scheduler/cluster/pgdriver => ../../cluster/pgdriver
)

require (
	github.com/go-stpe/scheduler/cluster v0.1.0
	github.com/go-stpe/scheduler/cluster/pgdriver v0.1.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/riverqueue/river v0.51.2
	github.com/riverqueue/river/riverdriver/riverpgxv5 v0.51.2
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-stpe/scheduler v0.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/redis/go-redis/v9 v9.22.0 // indirect
	github.com/riverqueue/river/riverdriver v0.51.2 // indirect
	github.com/riverqueue/river/rivershared v0.51.2 // indirect
	github.com/riverqueue/river/rivertype v0.51.2 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.2.0 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
