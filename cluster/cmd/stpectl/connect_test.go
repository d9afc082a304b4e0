package main

import (
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// Where stpectl finds Redis and which tasks it sees: -redis, then
// STPE_REDIS_URL, then REDIS_URL; -prefix; global flags on either side of
// the command.

func TestRedisAddressComesFromFlagThenSTPE_REDIS_URLThenREDIS_URL(t *testing.T) {
	f := newFixture(t)
	f.schedule("mail", "a", nil, time.Now().Add(time.Hour))
	url := "redis://" + f.srv.Addr + "/0"
	const nowhere = "redis://127.0.0.1:1/0"
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
	}{
		{"STPE_REDIS_URL", []string{"STPE_REDIS_URL=" + url}, nil, 0},
		{"REDIS_URL", []string{"REDIS_URL=" + url}, nil, 0},
		{"STPE_REDIS_URL before REDIS_URL", []string{"STPE_REDIS_URL=" + url, "REDIS_URL=" + nowhere}, nil, 0},
		{"STPE_REDIS_URL wins over a good REDIS_URL", []string{"STPE_REDIS_URL=" + nowhere, "REDIS_URL=" + url}, nil, 1},
		{"-redis before both", []string{"STPE_REDIS_URL=" + nowhere, "REDIS_URL=" + nowhere}, []string{"-redis", f.srv.Addr}, 0},
		{"-redis URL", nil, []string{"-redis", url}, 0},
	} {
		r := runCtl(t, tc.env, append(tc.args, "-prefix", f.prefix, "-json", "counts")...)
		if r.code != tc.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", tc.name, r.code, tc.code, r.stdout, r.stderr)
		}
		if tc.code == 0 {
			var c countsDocJSON
			decodeOne(t, r.stdout, &c)
			if c.Pending != 1 {
				t.Fatalf("%s: %+v", tc.name, c)
			}
		}
	}
}

func TestPrefixSelectsTheCluster(t *testing.T) {
	f := newFixture(t)
	f.schedule("mail", "mine", nil, time.Now().Add(time.Hour))
	other, err := cluster.New(f.rdb) // the default prefix
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Schedule(t.Context(), "mail", nil, time.Now().Add(time.Hour), cluster.WithID("theirs")); err != nil {
		t.Fatal(err)
	}
	var page listJSON
	f.ctlJSON(0, &page, "list")
	if len(page.Tasks) != 1 || page.Tasks[0].ID != "mine" {
		t.Fatalf("-prefix %s lists %+v", f.prefix, page.Tasks)
	}
	r := runCtl(t, nil, "-redis", f.srv.Addr, "-json", "list") // no -prefix: cluster.DefaultPrefix
	wantOK(t, r)
	decodeOne(t, r.stdout, &page)
	if len(page.Tasks) != 1 || page.Tasks[0].ID != "theirs" {
		t.Fatalf("the default prefix lists %+v", page.Tasks)
	}
}

func TestGlobalFlagsWorkAfterTheCommandAndAmongItsArguments(t *testing.T) {
	f := newFixture(t)
	f.schedule("mail", "a", []byte("x"), time.Now().Add(time.Hour))
	var task taskJSON
	r := runCtl(t, nil, "show", "a", "-redis", f.srv.Addr, "-prefix", f.prefix, "-json", "-timeout", "5s")
	wantOK(t, r)
	decodeOne(t, r.stdout, &task)
	if task.ID != "a" {
		t.Fatalf("%+v", task)
	}
}

func TestRedisDownExitsOne(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	addr := srv.Addr
	srv.Stop()
	for _, args := range [][]string{{"counts"}, {"list"}, {"show", "a"}, {"run", "a"}, {"health"}} {
		r := runCtl(t, nil, append([]string{"-redis", addr, "-timeout", "3s"}, args...)...)
		wantExit(t, r, 1, "connection refused")
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("stpectl %v: want the one error line, got\n%s", args, r.stderr)
		}
	}
}

func TestTimeoutBoundsTheCommand(t *testing.T) {
	f := newFixture(t)
	f.schedule("mail", "a", nil, time.Now().Add(time.Hour))
	r := f.ctl("-timeout", "1ns", "counts")
	wantExit(t, r, 1, "stpectl: counts: redis "+f.srv.Addr+": i/o timeout (no answer within -timeout 1ns)\n")
	wantOK(t, f.ctl("-timeout", "5s", "counts"))
}
