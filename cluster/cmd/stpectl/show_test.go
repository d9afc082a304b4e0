package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

func TestShowTextPayloadAsTextAndJSON(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		due := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)
		const payload = "{\"to\": \"ada\",\n \"subject\": \"héllo\"}"
		f.schedule("mail", "order-42", []byte(payload), due)

		r := f.ctl("show", "order-42")
		wantOK(t, r)
		for _, want := range []string{"ID:          order-42", "Kind:        mail", "State:       pending",
			"Failed runs: 0 (retry limit 3, 3 retries left)\nLost runs:   0 (", "(JSON, indented)",
			"    {\n      \"to\": \"ada\",\n      \"subject\": \"héllo\"\n    }\n",
			"Last error:  -"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("show lacks %q:\n%s", want, r.stdout)
			}
		}
		var task taskJSON
		f.ctlJSON(0, &task, "show", "order-42")
		if task.ID != "order-42" || task.Kind != "mail" || task.State != "pending" || !task.Due.Equal(due.Truncate(time.Microsecond)) ||
			task.MaxRetries != 3 || task.Payload.Encoding != "json" || task.Payload.Size != len(payload) || task.Payload.Data != payload ||
			compactJSON(t, task.Payload.Value) != compactJSON(t, []byte(payload)) || task.Payload.Truncated {
			t.Fatalf("show -json: %+v", task)
		}
	})
}

func TestShowBinaryPayloadAsHexAndBase64AndCutsLongOnes(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		binary := []byte{0x00, 0x01, 0xff, 'h', 'i', 0x1b, '[', '2', 'J'} // NUL, invalid UTF-8 and a terminal escape
		f.schedule("blob", "bin", binary, time.Now().Add(time.Hour))
		long := bytes.Repeat([]byte("é"), 1500) // 3,000 bytes of text
		f.schedule("blob", "long", long, time.Now().Add(time.Hour))

		r := f.ctl("show", "bin")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "9 bytes (binary (not printable UTF-8), hex dump)") || !strings.Contains(r.stdout, "00 01 ff 68 69 1b 5b 32  4a") ||
			strings.ContainsRune(r.stdout, 0x1b) {
			t.Fatalf("show of a binary payload:\n%q", r.stdout)
		}
		var task taskJSON
		f.ctlJSON(0, &task, "show", "bin")
		raw, err := base64.StdEncoding.DecodeString(task.Payload.Data)
		if err != nil || task.Payload.Encoding != "base64" || !bytes.Equal(raw, binary) || task.Payload.Truncated {
			t.Fatalf("binary payload %+v (%v)", task.Payload, err)
		}

		f.ctlJSON(0, &task, "show", "long")
		if task.Payload.Size != 3000 || !task.Payload.Truncated || task.Payload.Data != strings.Repeat("é", 512) {
			t.Fatalf("long payload: size %d truncated %v, %d bytes shown", task.Payload.Size, task.Payload.Truncated, len(task.Payload.Data))
		}
		f.ctlJSON(0, &task, "show", "-full", "long")
		if task.Payload.Truncated || task.Payload.Data != string(long) {
			t.Fatalf("-full: truncated %v, %d bytes shown", task.Payload.Truncated, len(task.Payload.Data))
		}
		r = f.ctl("show", "long")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "3000 bytes (text, first 1024 bytes; -full for all)") {
			t.Fatalf("show of a long payload:\n%s", r.stdout[:300])
		}
		r = f.ctl("show", "long", "-full")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "3000 bytes (text)") || !strings.Contains(r.stdout, string(long)) {
			t.Fatal("show -full does not show the whole payload")
		}
	})
}

func TestShowDeadTaskGivesTheLastErrorWithThePanicStack(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.worker("crash", func(context.Context, cluster.Task) error { panic("the index is out of range") })
		if _, err := f.node.Schedule(context.Background(), "crash", nil, time.Now(), cluster.WithID("p1"), cluster.WithTaskMaxRetries(0)); err != nil {
			t.Fatal(err)
		}
		f.waitState("p1", cluster.Dead)
		r := f.ctl("show", "p1")
		wantOK(t, r)
		for _, want := range []string{"State:       dead", "Failed runs: 1 (retry limit 0)\n", "Last error:\n", "the index is out of range", "    goroutine "} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("show lacks %q:\n%s", want, r.stdout)
			}
		}
		var task taskJSON
		f.ctlJSON(0, &task, "show", "p1")
		if task.State != "dead" || !strings.Contains(task.LastError, "the index is out of range") || !strings.Contains(task.LastError, "goroutine ") {
			t.Fatalf("show -json of a panicked task: %+v", task)
		}
	})
}

func TestShowUnknownTaskIsNotFound(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		f.schedule("mail", "somebody", nil, time.Now().Add(time.Hour))
		wantExit(t, f.ctl("show", "nobody"), 1, "stpectl: show nobody: no such task")
		var doc errorJSON
		f.ctlJSON(1, &doc, "show", "nobody")
		if doc.Reason != "not_found" {
			t.Fatalf("error document %+v", doc)
		}
	})
}

// compactJSON is the JSON text p without its insignificant white space.
func compactJSON(t *testing.T, p []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, p); err != nil {
		t.Fatalf("compact %q: %v", p, err)
	}
	return out.String()
}

func TestARetryingTaskShowsWhenItRunsNextBesideItsDueTime(t *testing.T) {
	onEachStore(t, func(t *testing.T, f *fixture) {
		failed := make(chan struct{}, 1)
		w := f.worker("flaky", func(context.Context, cluster.Task) error {
			failed <- struct{}{}
			return errors.New("the mail server is down")
		}, cluster.WithBackoff(func(int) time.Duration { return time.Hour }))
		due := time.Now()
		if _, err := f.node.Schedule(context.Background(), "flaky", nil, due, cluster.WithID("r"), cluster.WithTaskMaxRetries(2)); err != nil {
			t.Fatal(err)
		}
		recv(t, failed, "the failed run")
		w.StopNow()
		f.waitState("r", cluster.Pending)
		for { // the failure is recorded just after the handler returns
			if info, _ := f.get("r"); info.Retrying {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}

		r := f.ctl("show", "r")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "(in 1h), the retry") && !strings.Contains(r.stdout, "(in 59m") {
			t.Errorf("show gives no next run an hour away:\n%s", r.stdout)
		}
		for _, want := range []string{"State:       pending (retrying", "Next run:    ", ", the retry after a failed or lost run\n",
			"Failed runs: 1 (retry limit 2, 1 retry left)\n"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("show lacks %q:\n%s", want, r.stdout)
			}
		}
		var task taskJSON
		f.ctlJSON(0, &task, "show", "r")
		if task.NextRun == nil || task.NextRun.Sub(task.Due) < 59*time.Minute || task.Due.Sub(due) > time.Millisecond {
			t.Fatalf("show -json: due %v, next run %v", task.Due, task.NextRun)
		}
		r = f.ctl("list")
		wantOK(t, r)
		if !strings.Contains(r.stdout, "), runs in 1h ") && !strings.Contains(r.stdout, "), runs in 59m") {
			t.Fatalf("list:\n%s", r.stdout)
		}
		// run moves the next run, not the due time.
		wantOK(t, f.ctl("run", "r"))
		f.ctlJSON(0, &task, "show", "r")
		if task.NextRun == nil || time.Since(*task.NextRun) > time.Minute || task.Due.Sub(due) > time.Millisecond {
			t.Fatalf("after run: due %v, next run %v", task.Due, task.NextRun)
		}
	})
}
