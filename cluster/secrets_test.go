package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/go-stpe/scheduler/cluster/redisconn"
)

// syncBuffer is a bytes.Buffer that the node's goroutines may log into
// while the test reads it; mu guards buf.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNoCredentialInTheNodesLogsRecordsOrErrors runs a node on a
// password-protected redis-server, reached through a URL that carries the
// user's password (as an operator would write it), through completed,
// failed and panicking runs and an outage of Redis, and scans everything
// the node said or stored where an operator reads it: its log at debug
// level, its member record, the tasks' infos with their errors and run
// history, and the errors of calls made while Redis was down.
func TestNoCredentialInTheNodesLogsRecordsOrErrors(t *testing.T) {
	const password = "Sec-r3t-Pw-in-URL"
	srv := redistest.Start(t, redistest.Options{Password: password})
	rdb, err := redisconn.Config{Addr: "redis://default:" + password + "@" + srv.Addr + "/0", MaxRetries: -1}.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })

	var log syncBuffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n, err := cluster.New(rdb, append(testOptions(), cluster.WithLogger(logger), cluster.WithMaxRetries(0))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.StopNow)
	ran := make(chan string, 3)
	handlers := map[string]cluster.Handler{
		"ok":    func(_ context.Context, task cluster.Task) error { ran <- task.ID; return nil },
		"fails": func(_ context.Context, task cluster.Task) error { ran <- task.ID; return errors.New("refused") },
		"panics": func(_ context.Context, task cluster.Task) error {
			ran <- task.ID
			panic("boom")
		},
	}
	for kind, h := range handlers {
		if err := n.Handle(kind, h); err != nil {
			t.Fatal(err)
		}
	}
	start(t, n)
	ctx := context.Background()
	var ids []string
	for _, kind := range []string{"ok", "fails", "panics"} {
		id, err := n.Schedule(ctx, kind, []byte(`{"x":1}`), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for range ids {
		recv(t, ran, 10*time.Second, "a run")
	}
	waitFor(t, 10*time.Second, "the failed and the panicked task to go dead", func() bool { return counts(t, n).Dead == 2 })

	var seen strings.Builder
	for _, id := range ids {
		info, _, err := n.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&seen, "%+v\n", info)
	}
	members, err := n.Members(ctx)
	if err != nil || len(members) == 0 {
		t.Fatalf("members: %v, %d of them", err, len(members))
	}
	fmt.Fprintf(&seen, "%+v\n", members)

	// Redis goes away: the node logs its failures, and the calls fail.
	srv.Kill()
	_, err = n.Schedule(ctx, "ok", nil, time.Now().Add(time.Hour))
	fmt.Fprintf(&seen, "%v\n", err)
	_, err = n.Cancel(ctx, ids[1])
	fmt.Fprintf(&seen, "%v\n", err)
	_, err = n.Counts(ctx)
	fmt.Fprintf(&seen, "%v\n", err)
	if err == nil {
		t.Fatal("counts with Redis down: no error")
	}
	waitFor(t, 10*time.Second, "the node to log a failed Redis call", func() bool {
		return strings.Contains(log.String(), "level=WARN") || strings.Contains(log.String(), "level=ERROR")
	})
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := n.Stop(stopCtx); err != nil {
		fmt.Fprintf(&seen, "%v\n", err)
	}

	all := log.String() + seen.String()
	if strings.Contains(all, password) {
		t.Fatalf("the password shows in what the node said or stored:\n%s", all)
	}
	if !strings.Contains(all, srv.Addr) {
		t.Fatalf("nothing named the server %s: the scan read too little:\n%s", srv.Addr, all)
	}
}
