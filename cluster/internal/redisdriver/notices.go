package redisdriver

import (
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The messages of the store's pub/sub channels: one per partition
// (Partition.Channel), to which a node subscribes while it owns the
// partition for some kind, and prefix:membership (Keys.MembershipChannel),
// to which every started node subscribes. The scripts write the
// partitions' messages (lua/lib/publish.lua); AnnounceEnded and
// AnnounceMembership write the others; parseNotice reads them all. Six
// messages on a partition's channel:
//
//   - "<due> <kind> <id>": the task became pending, to run at due (µs);
//     the ID comes last, so it may hold spaces;
//   - "many <due> <kind> <length> <id> ...": tasks stored together
//     (ScheduleMany) became pending; each ID is preceded by its length in
//     bytes, so it may hold spaces, and followed by a space but the last;
//   - "claimed <id>": a node won the claim, the others drop it (not sent
//     when the claimer is the channel's one listener: lua/lib/claim.lua);
//   - "canceled <id>": Cancel removed it; a node running it cancels the
//     run's ctx at once;
//   - "resumed <kind>": Resume made the kind's tasks claimable again;
//   - "ended <kind>": a run of an occurrence of the periodic task whose
//     occurrences are of kind ended (on the channel of the task's
//     partition);
//
// and one on the membership channel, "changed": a node joined or left the
// claimers, or found one expired.

// parseNotice reads a message of a partition's channel; ok is false for
// one it does not know.
func parseNotice(payload string) (n driver.Notice, ok bool) {
	if tasks, ok := parseMany(payload); ok {
		return driver.Notice{Kind: driver.NoticePending, Tasks: tasks}, true
	}
	if id, found := strings.CutPrefix(payload, "claimed "); found {
		return driver.Notice{Kind: driver.NoticeClaimed, ID: id}, true
	}
	if id, found := strings.CutPrefix(payload, "canceled "); found {
		return driver.Notice{Kind: driver.NoticeCanceled, ID: id}, true
	}
	if kind, found := strings.CutPrefix(payload, "resumed "); found {
		return driver.Notice{Kind: driver.NoticeResumed, TaskKind: kind}, true
	}
	if kind, found := strings.CutPrefix(payload, "ended "); found {
		return driver.Notice{Kind: driver.NoticeEnded, TaskKind: kind}, true
	}
	parts := strings.SplitN(payload, " ", 3)
	if len(parts) != 3 {
		return driver.Notice{}, false
	}
	due, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return driver.Notice{}, false
	}
	return driver.Notice{Kind: driver.NoticePending,
		Tasks: []driver.NoticedTask{{ID: parts[2], Kind: parts[1], Due: time.UnixMicro(due)}}}, true
}

// parseMany reads a "many" message; ok is false for another message, or
// one malformed.
func parseMany(payload string) (tasks []driver.NoticedTask, ok bool) {
	rest, found := strings.CutPrefix(payload, "many ")
	if !found {
		return nil, false
	}
	for rest != "" {
		f := strings.SplitN(rest, " ", 4)
		if len(f) != 4 {
			return nil, false
		}
		due, err1 := strconv.ParseInt(f[0], 10, 64)
		size, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || size < 0 || size > len(f[3]) {
			return nil, false
		}
		tasks = append(tasks, driver.NoticedTask{ID: f[3][:size], Kind: f[1], Due: time.UnixMicro(due)})
		rest = f[3][size:]
		if rest != "" {
			if rest, found = strings.CutPrefix(rest, " "); !found || rest == "" {
				return nil, false
			}
		}
	}
	return tasks, len(tasks) > 0
}
