package redisdriver

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// commandCalls is how many times the server has run command (INFO
// commandstats, the calls of scripts included).
func commandCalls(t *testing.T, rdb *redis.Client, command string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":calls="); ok {
			n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	return 0
}

// dueTaskIn stores a task of kind "k", due a second ago, in partition 0
// of d, and returns its ID.
func dueTaskIn(t *testing.T, d *Driver, n int) string {
	t.Helper()
	for i := 0; ; i++ {
		id := "t" + strconv.Itoa(n) + "-" + strconv.Itoa(i)
		if d.partOf(id).Index != 0 {
			continue
		}
		_, err := d.Schedule(context.Background(), driver.NewTask{ID: id, Kind: "k", Payload: []byte("p"), Due: time.Now().Add(-time.Second), MaxRetries: 3})
		require.NoError(t, err)
		return id
	}
}

// TestClaimedIsSentOnlyWhenAnotherNodeHearsTheChannel: a claim by the
// one node that hears its partition's channel sends no "claimed" notice
// (nobody else could use it); once another node hears the channel too,
// the claim sends it and that node hears it.
func TestClaimedIsSentOnlyWhenAnotherNodeHearsTheChannel(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	claimer := New(rdb, Options{Prefix: "cn", Partitions: 4})
	other := New(rdb, Options{Prefix: "cn", Partitions: 4})

	subscribed := make(chan struct{}, 4)
	mine, err := claimer.Subscribe(ctx, func(n driver.Notice) {
		if n.Kind == driver.NoticeSubscribed {
			subscribed <- struct{}{}
		}
	})
	require.NoError(t, err)
	closeMine := sync.OnceFunc(mine.Close)
	defer closeMine()
	require.NoError(t, mine.Follow(ctx, []int{0}))
	<-subscribed

	alone := dueTaskIn(t, claimer, 1)
	before := commandCalls(t, rdb, "spublish")
	c, err := claimer.Claim(ctx, alone, "k", time.Now(), time.Minute, "claimer:1")
	require.NoError(t, err)
	require.Equal(t, driver.ClaimWon, c.Outcome)
	require.Equal(t, before, commandCalls(t, rdb, "spublish"), "the claimer alone hears the channel: no notice")

	heard := make(chan string, 4)
	otherSubscribed := make(chan struct{}, 4)
	theirs, err := other.Subscribe(ctx, func(n driver.Notice) {
		switch n.Kind {
		case driver.NoticeSubscribed:
			otherSubscribed <- struct{}{}
		case driver.NoticeClaimed:
			heard <- n.ID
		}
	})
	require.NoError(t, err)
	defer theirs.Close()
	require.NoError(t, theirs.Follow(ctx, []int{0}))
	<-otherSubscribed

	shared := dueTaskIn(t, claimer, 2)
	c, err = claimer.Claim(ctx, shared, "k", time.Now(), time.Minute, "claimer:1")
	require.NoError(t, err)
	require.Equal(t, driver.ClaimWon, c.Outcome)
	require.Equal(t, shared, <-heard, "another node hears the channel: it hears the claim")

	closeMine() // the claimer no longer hears the channel; the other does
	last := dueTaskIn(t, claimer, 3)
	c, err = claimer.Claim(ctx, last, "k", time.Now(), time.Minute, "claimer:1")
	require.NoError(t, err)
	require.Equal(t, driver.ClaimWon, c.Outcome)
	require.Equal(t, last, <-heard, "the one listener is not the claimer: it hears the claim")
}
