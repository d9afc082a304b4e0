package redisdriver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// oldTask is a task read from the old layout.
type oldTask struct {
	id     string
	kind   string
	score  float64
	fields map[string]string
}

// drain moves the tasks of src, a set of the old layout whose members are
// in state, a round at a time, until it is empty. Every round removes
// every member it read, so each makes progress.
func (m *migration) drain(ctx context.Context, state driver.State, src string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		zs, err := m.rdb.ZRangeWithScores(ctx, src, 0, int64(m.batch-1)).Result()
		if err != nil || len(zs) == 0 {
			return err
		}
		if err := m.moveRound(ctx, state, src, zs); err != nil {
			return err
		}
	}
}

// moveRound moves the tasks zs of src, in state: it reads their hashes,
// copies them into their partitions, and deletes their old keys.
func (m *migration) moveRound(ctx context.Context, state driver.State, src string, zs []redis.Z) error {
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i], _ = z.Member.(string)
	}
	hashes, err := m.readHashes(ctx, ids)
	if err != nil {
		return err
	}
	var tasks, unindexed []oldTask
	dropped := 0
	for i, id := range ids {
		t := oldTask{id: id, score: zs[i].Score, fields: hashes[i], kind: hashes[i]["kind"]}
		switch {
		case len(t.fields) == 0:
			dropped++
		case t.kind == "":
			unindexed = append(unindexed, t)
		default:
			tasks = append(tasks, t)
		}
	}
	if err := m.copyTasks(ctx, state, append(tasks, unindexed...)); err != nil {
		return err
	}
	pipe := m.rdb.Pipeline()
	members := anys(ids)
	pipe.ZRem(ctx, src, members...)
	for _, st := range driver.States {
		pipe.ZRem(ctx, m.old.StateSet(string(st)), members...)
	}
	for kind, ids := range byKind(tasks) {
		for _, st := range driver.States {
			pipe.ZRem(ctx, m.old.KindIndex(string(st), kind), ids...)
		}
	}
	m.delOld(ctx, pipe, append(tasks, unindexed...), m.old.Task)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	m.count(state, len(tasks))
	m.report.Unindexed += len(unindexed)
	m.report.Dropped += dropped
	return nil
}

// delOld queues on pipe the deletion of the old key (key of its ID) of
// each task: one DEL when the old keys share a server's keyspace (a hash
// tag in the prefix, or one server), else one per key.
func (m *migration) delOld(ctx context.Context, pipe redis.Pipeliner, tasks []oldTask, key func(string) string) {
	if len(tasks) == 0 {
		return
	}
	keys := make([]string, len(tasks))
	for i, t := range tasks {
		keys[i] = key(t.id)
	}
	_, cluster := m.rdb.(*redis.ClusterClient)
	if _, tag, _ := SplitHashTag(m.prefix); tag != "" || !cluster {
		pipe.Del(ctx, keys...)
		return
	}
	for _, k := range keys {
		pipe.Del(ctx, k)
	}
}

// count adds n tasks moved in state to the report.
func (m *migration) count(state driver.State, n int) {
	switch state {
	case driver.Pending:
		m.report.Pending += n
	case driver.Running:
		m.report.Running += n
	case driver.Dead:
		m.report.Dead += n
	case driver.Done:
		m.report.Done += n
	}
}

// readHashes reads the old hashes of ids, in one pipeline; an empty map
// for an ID with none.
func (m *migration) readHashes(ctx context.Context, ids []string) ([]map[string]string, error) {
	pipe := m.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, m.old.Task(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(ids))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// copyTasks copies tasks into their partitions, as state: one
// transaction per partition, several partitions at once. A task with a
// kind is put in state's set (unless it is pending and its kind paused:
// then in its kind's pending index alone, as Pause leaves it) and in its
// kind's index, with its old score, after it is removed from every other
// set of its partition; a task without one (unindexed) gets its hash
// alone. Copying a task again overwrites the copy.
func (m *migration) copyTasks(ctx context.Context, state driver.State, tasks []oldTask) error {
	groups := make(map[int][]oldTask)
	for _, t := range tasks {
		i := driver.PartitionOf(t.id, len(m.parts))
		groups[i] = append(groups[i], t)
	}
	return eachGroup(groups, func(i int, tasks []oldTask) error {
		p := m.parts[i]
		_, err := m.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			keys := make([]string, len(tasks))
			for j, t := range tasks {
				keys[j] = p.Task(t.id)
			}
			tx.Del(ctx, keys...) // one slot: the partition's
			var indexed []oldTask
			for _, t := range tasks {
				tx.HSet(ctx, p.Task(t.id), t.fields)
				if t.kind != "" {
					indexed = append(indexed, t)
				}
			}
			if len(indexed) == 0 {
				return nil
			}
			ids := make([]any, len(indexed))
			for j, t := range indexed {
				ids[j] = t.id
			}
			for _, st := range driver.States {
				tx.ZRem(ctx, p.StateSet(string(st)), ids...)
			}
			var claimable []redis.Z
			for kind, ts := range groupByKind(indexed) {
				zs := make([]redis.Z, len(ts))
				kids := make([]any, len(ts))
				for j, t := range ts {
					zs[j] = redis.Z{Score: t.score, Member: t.id}
					kids[j] = t.id
				}
				for _, st := range driver.States {
					tx.ZRem(ctx, p.KindIndex(string(st), kind), kids...)
				}
				tx.ZAdd(ctx, p.KindIndex(string(state), kind), zs...)
				tx.SAdd(ctx, p.Kinds(), kind)
				if state != driver.Pending || !m.paused[kind] {
					claimable = append(claimable, zs...)
				}
			}
			if len(claimable) > 0 {
				tx.ZAdd(ctx, p.StateSet(string(state)), claimable...)
			}
			return nil
		})
		return err
	})
}

// moveStrays moves the keys of the old layout a scan found outside its
// sets: task hashes in no state's set (moved as they are) and done
// markers (moved with the time they have left to live). Other keys (the
// sets, the cluster-wide records) are left alone.
func (m *migration) moveStrays(ctx context.Context, keys []string) error {
	var hashIDs, markIDs []string
	for _, k := range keys {
		if id, ok := strings.CutPrefix(k, m.old.TaskPrefix()); ok {
			hashIDs = append(hashIDs, id)
		} else if id, ok := strings.CutPrefix(k, m.old.MarkPrefix()); ok {
			markIDs = append(markIDs, id)
		}
	}
	if len(hashIDs) > 0 {
		hashes, err := m.readHashes(ctx, hashIDs)
		if err != nil {
			return err
		}
		var tasks []oldTask
		for i, id := range hashIDs {
			if len(hashes[i]) > 0 {
				tasks = append(tasks, oldTask{id: id, fields: hashes[i]})
			}
		}
		if err := m.copyTasks(ctx, driver.Pending, tasks); err != nil {
			return err
		}
		pipe := m.rdb.Pipeline()
		m.delOld(ctx, pipe, tasks, m.old.Task)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		m.report.Unindexed += len(tasks)
	}
	if len(markIDs) > 0 {
		return m.moveMarkers(ctx, markIDs)
	}
	return nil
}

// moveMarkers moves the done markers of ids into the partitions, each
// with its value and the time it has left to live, then deletes the old
// ones it copied (or found gone).
func (m *migration) moveMarkers(ctx context.Context, ids []string) error {
	pipe := m.rdb.Pipeline()
	vals := make([]*redis.StringCmd, len(ids))
	ttls := make([]*redis.DurationCmd, len(ids))
	for i, id := range ids {
		vals[i] = pipe.Get(ctx, m.old.Mark(id))
		ttls[i] = pipe.PTTL(ctx, m.old.Mark(id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	pipe = m.rdb.Pipeline()
	var done []string // copied, or gone
	for i, id := range ids {
		v, err := vals[i].Result()
		if errors.Is(err, redis.Nil) {
			continue // expired since the scan
		}
		if err != nil {
			return err
		}
		ttl, err := ttls[i].Result()
		if err != nil {
			return err
		}
		switch {
		case ttl > 0:
			pipe.Set(ctx, m.parts[driver.PartitionOf(id, len(m.parts))].Done(id), v, max(ttl, time.Millisecond))
		case ttl == -1: // no expiry (go-redis passes Redis's -1 through)
			pipe.Set(ctx, m.parts[driver.PartitionOf(id, len(m.parts))].Done(id), v, 0)
		default:
			continue // expired between the two reads
		}
		done = append(done, id)
	}
	if len(done) == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	pipe = m.rdb.Pipeline()
	gone := make([]oldTask, len(done))
	for i, id := range done {
		gone[i] = oldTask{id: id}
	}
	m.delOld(ctx, pipe, gone, m.old.Mark)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	m.report.Markers += len(done)
	return nil
}
