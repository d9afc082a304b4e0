module github.com/go-stpe/scheduler/dashboard

go 1.25

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/go-stpe/scheduler v0.1.0
	github.com/go-stpe/scheduler/cluster v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
