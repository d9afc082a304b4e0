module github.com/go-stpe/scheduler/cluster/cmd/stpectl

go 1.25.0

require (
	github.com/go-stpe/scheduler v0.1.0
	github.com/go-stpe/scheduler/cluster v0.1.0
	github.com/go-stpe/scheduler/cluster/pgdriver v0.1.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
)
