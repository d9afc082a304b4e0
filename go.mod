module github.com/go-stpe/scheduler

go 1.25
