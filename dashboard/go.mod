module github.com/go-stpe/scheduler/dashboard

go 1.25

require (
	github.com/go-stpe/scheduler v0.1.0
	go.uber.org/goleak v1.3.0
)
