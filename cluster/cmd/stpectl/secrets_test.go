package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// No credential in any output: every command, on its way to success and
// to failure, with and without -json, given a Redis URL with a user name
// and password, writes neither of them anywhere.

const (
	secretUser     = "opsalice"
	secretPassword = "Pw-s3cret-Zq"
)

// wantNoSecret fails t if r's output holds the user name or the password.
func wantNoSecret(t *testing.T, what []string, r result) {
	t.Helper()
	for _, secret := range []string{secretUser, secretPassword} {
		if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
			t.Errorf("stpectl %v shows %q:\nstdout: %s\nstderr: %s", what, secret, r.stdout, r.stderr)
		}
	}
}

// everyCommandOnce is each command, its success then a failure of its
// own, on a store holding the pending tasks a and b of kind mail and the
// dead task d; the first twelve read or change the store.
var everyCommandOnce = [][]string{
	{"counts"}, {"list"}, {"list", "-state", "dead"}, {"list", "-cursor", "garbage"},
	{"show", "b"}, {"show", "nobody"}, {"health", "-min-nodes", "0"}, {"health"},
	{"nodes"}, {"periodic"}, {"pause", "mail"}, {"resume", "mail"}, {"pause", "bad kind"},
	{"run", "b"}, {"run", "nobody"}, {"reschedule", "b", "10m"}, {"reschedule", "d", "10m"},
	{"retry", "d"}, {"retry", "b"}, {"cancel", "b"}, {"cancel", "nobody"}, {"delete", "b"}, {"delete", "a"},
	{"purge", "-older", "1d"}, {"purge", "-older", "soon"}, {"migrate"}, {"frobnicate"}, {"help"}, {"-h"}, {"list", "-h"},
}

func TestNoCommandShowsTheRedisCredentials(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: "admin-pw"})
	admin := srv.Client()
	defer admin.Close()
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", secretUser, "on", ">"+secretPassword, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	userURL := "redis://" + secretUser + ":" + secretPassword + "@" + srv.Addr + "/0"
	f := newFixtureOn(t, srv, []string{"-redis", userURL}, func() redis.UniversalClient {
		return redis.NewClient(&redis.Options{Addr: srv.Addr, Username: secretUser, Password: secretPassword})
	})
	f.schedule("mail", "a", []byte(`{"to":"ada"}`), time.Now().Add(time.Hour))
	f.schedule("mail", "b", []byte("x"), time.Now().Add(time.Hour))
	f.deadTasks("fax", "d")

	commands := everyCommandOnce
	run := func(env []string, global ...string) {
		t.Helper()
		for _, args := range commands {
			for _, asJSON := range []bool{false, true} {
				all := append(append([]string{}, global...), "-prefix", f.prefix)
				if asJSON {
					all = append(all, "-json")
				}
				all = append(all, args...)
				wantNoSecret(t, all, runCtl(t, env, all...))
			}
		}
	}
	run(nil, "-redis", userURL)
	run([]string{"STPE_REDIS_URL=" + userURL})
	run([]string{"REDIS_URL=" + userURL, "STPE_REDIS_PASSWORD=" + secretPassword, "STPE_REDIS_USERNAME=" + secretUser})

	// Failures of the connection itself: a wrong password, a bad URL, a
	// wrong prefix, a timeout, and Redis gone.
	wrong := "redis://" + secretUser + ":not-" + secretPassword + "@" + srv.Addr + "/0"
	for _, args := range [][]string{
		{"-redis", wrong, "counts"}, {"-redis", wrong, "health"}, {"-redis", wrong, "-json", "health"},
		{"-redis", userURL + "x", "counts"}, {"-redis", "redis://" + secretUser + ":" + secretPassword + "@" + srv.Addr + "/nodb", "counts"},
		{"-redis", userURL, "-prefix", "{nothing}", "counts"}, {"-redis", userURL, "-prefix", "{nothing}", "-json", "list"},
		{"-redis", userURL, "-timeout", "1ns", "counts"}, {"-redis", userURL, "-timeout", "1ns", "-json", "health"},
		{"-redis", "redis+cluster://" + secretUser + ":" + secretPassword + "@" + srv.Addr, "counts"},
		{"-redis", "redis+sentinel://" + secretUser + ":" + secretPassword + "@" + srv.Addr + "?master_name=m", "counts"},
	} {
		r := runCtl(t, nil, args...)
		if r.code == 0 {
			t.Errorf("stpectl %v succeeded", args)
		}
		wantNoSecret(t, args, r)
	}
	srv.Stop()
	for _, args := range commands[:12] {
		all := append([]string{"-redis", userURL, "-timeout", "2s"}, args...)
		r := runCtl(t, nil, all...)
		if r.code == 0 && args[0] != "help" && args[0] != "-h" {
			t.Errorf("stpectl %v succeeded with Redis down", all)
		}
		wantNoSecret(t, all, r)
	}
}

// TestHealthNamesTheAddressRedacted is the operator's first sight of it:
// the address shows, without its password, in text and JSON.
func TestHealthNamesTheAddressRedacted(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: secretPassword})
	url := "redis://:" + secretPassword + "@" + srv.Addr + "/0"
	f := newFixtureOn(t, srv, []string{"-redis", url}, func() redis.UniversalClient { return srv.Client() })
	f.schedule("mail", "a", nil, time.Now().Add(time.Hour))
	r := f.ctl("health", "-min-nodes", "0")
	wantOK(t, r)
	if !strings.Contains(r.stdout, " at redis://***@"+srv.Addr+"/0,") {
		t.Fatalf("health:\n%s", r.stdout)
	}
	var doc healthJSON
	f.ctlJSON(0, &doc, "health", "-min-nodes", "0")
	if doc.Redis != "redis://***@"+srv.Addr+"/0" {
		t.Fatalf("health -json: %+v", doc)
	}
	r = f.ctl("health")
	wantExit(t, r, 1)
	if strings.Contains(r.stdout+r.stderr, secretPassword) {
		t.Fatalf("unhealthy shows the password:\n%s%s", r.stdout, r.stderr)
	}
}
