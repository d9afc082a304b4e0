package cluster

import (
	"context"
	"errors"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Migrate: the upgrade from the single-slot layout of the versions before
// partitions (oldLayout) to the partitions. Every task is copied into its
// partition (its hash with every field, its place in its state's set and
// its kind's index, with the same score), in one MULTI/EXEC per partition
// and round, and only then deleted from the old keys. A task is thus
// always in the old keys, or in its partition, or (between the two steps)
// in both with the same content; a rerun after an interruption copies
// again what is still in the old keys, overwriting the copy exactly, so
// nothing is lost and nothing doubled. The order is: the paused kinds
// first (so that a paused kind's pending task lands paused), then the
// tasks by state, then the task hashes found in no state's set and the
// done markers, then the old sets of kinds, and last the layout record,
// which lets nodes of this version start.

// migrateBatch is how many tasks Migrate moves per round: a round reads
// their hashes in one pipeline, copies them in one transaction per
// partition (run side by side) and deletes the old keys in one pipeline.
const migrateBatch = 5000

// migrateScanCount is the COUNT of the SCAN that finds the keys of the old
// layout outside its sets.
const migrateScanCount = 10000

// migrateParallel is how many partitions' transactions a round runs at
// once.
const migrateParallel = 16

// MigrateReport says what Migrate moved.
type MigrateReport struct {
	// Partitions is the number of partitions the tasks were moved into.
	Partitions int
	// Pending, Running, Dead and Done count the tasks moved, by state.
	Pending, Running, Dead, Done int
	// Unindexed counts the task hashes found in no state's set (which no
	// operation of the earlier version showed either); they were moved
	// as they were.
	Unindexed int
	// Markers counts the done markers moved, each with the time it had
	// left to live.
	Markers int
	// Dropped counts the entries of the old sets whose task hash was
	// gone: tasks an interrupted run had already copied, or entries no
	// task backed. They were removed.
	Dropped int
	// PausedKinds are the kinds that were paused: they are paused in
	// every partition.
	PausedKinds []string
	// Elapsed is how long the migration took.
	Elapsed time.Duration
}

// Tasks is the number of tasks moved, in any state.
func (r MigrateReport) Tasks() int {
	return r.Pending + r.Running + r.Dead + r.Done + r.Unindexed
}

// migrateOption is an Option that Migrate alone reads; a Node ignores it.
type migrateOption struct {
	force bool // move even while live nodes are registered
	batch int  // tasks per round, if not 0 (tests)
}

func (migrateOption) apply(*config) {}

// WithMigrateForce lets Migrate run while nodes are registered as live
// under the prefix (prefix:nodes). Use it only when those nodes are known
// to be gone (their registrations expire a lease after they stopped): a
// node of the earlier version that still runs would go on writing the old
// layout, and its running tasks would be moved under it. A Node ignores
// this option.
func WithMigrateForce() Option { return migrateOption{force: true} }

// Migrate moves every task stored under the prefix (WithPrefix) in the
// single-slot layout of the versions before partitions into the
// partitions (WithPartitions), and then writes the layout record, so that
// nodes of this version, made with the same WithPartitions, start on the
// keyspace. Each task keeps its state, its score (due time, lease expiry,
// time of death or completion), every field of its hash (payload, attempts,
// history, owner...) and its kind's index entries; the done markers of
// tasks that ran (kept for WithRetention) keep the time they have left;
// the paused kinds are paused in every partition. The other options are
// ignored. Like a database migration (River's rivermigrate, Flyway), it
// runs once, with every node stopped: it refuses, with an error wrapping
// ErrLayout, while nodes are registered as live under the prefix (unless
// WithMigrateForce), and when the keyspace is recorded with another number
// of partitions or an unknown layout version.
//
// It is idempotent and resumable: each task is copied into its partition
// (one MULTI/EXEC) before its old keys are deleted, so if Migrate is
// interrupted (ctx canceled, a crash, Redis unreachable), nothing is lost
// and running it again finishes the job without doubling anything. On a
// keyspace with nothing to move it only writes the layout record. The
// work goes in rounds of thousands of tasks, a few round trips each (see
// docs/cluster-upgrade.md for the measured speed). A bad option is an
// error wrapping scheduler.ErrInvalidArgument; a Redis error is returned
// wrapped, with the report of what was moved until then.
func Migrate(ctx context.Context, rdb redis.UniversalClient, opts ...Option) (MigrateReport, error) {
	start := time.Now()
	cfg := defaultConfig()
	mo := migrateOption{batch: migrateBatch}
	for _, o := range opts {
		if o == nil {
			return MigrateReport{}, invalid("migrate", "nil option")
		}
		if m, ok := o.(migrateOption); ok {
			mo.force = mo.force || m.force
			if m.batch > 0 {
				mo.batch = m.batch
			}
		}
		o.apply(&cfg)
	}
	if rdb == nil {
		return MigrateReport{}, invalid("migrate", "nil Redis client")
	}
	if err := cfg.validate(); err != nil {
		return MigrateReport{}, err
	}
	m := &migration{st: newStore(rdb, cfg.prefix, cfg.partitions), old: oldLayout{Prefix: cfg.prefix}, batch: mo.batch}
	m.report.Partitions = cfg.partitions
	err := m.run(ctx, mo.force)
	m.report.Elapsed = time.Since(start)
	return m.report, err
}

// migration is one run of Migrate.
type migration struct {
	st     store
	old    oldLayout
	batch  int
	paused map[string]bool // the kinds paused in the old layout
	report MigrateReport
}

// run does the migration's steps in order.
func (m *migration) run(ctx context.Context, force bool) error {
	if err := m.checkRecord(ctx); err != nil {
		return err
	}
	if !force {
		if err := m.checkNoLiveNodes(ctx); err != nil {
			return err
		}
	}
	if err := m.pauseKinds(ctx); err != nil {
		return failed("migrate: pause the paused kinds in every partition", err)
	}
	kinds, err := m.kinds(ctx)
	if err != nil {
		return failed("migrate: read the kinds", err)
	}
	for _, state := range states {
		sources := []string{m.old.StateSet(string(state))}
		for _, k := range kinds {
			sources = append(sources, m.old.KindIndex(string(state), k))
		}
		for _, src := range sources {
			if err := m.drain(ctx, state, src); err != nil {
				return failed("migrate: move the "+string(state)+" tasks of "+src, err)
			}
		}
	}
	if err := m.scan(ctx, globEscape(m.old.Prefix)+":*", m.moveStrays); err != nil {
		return failed("migrate: move the task hashes and done markers", err)
	}
	if err := m.st.rdb.Del(ctx, m.old.Kinds()).Err(); err != nil {
		return failed("migrate: delete the old set of kinds", err)
	}
	if err := m.st.rdb.Del(ctx, m.old.Paused()).Err(); err != nil {
		return failed("migrate: delete the old set of paused kinds", err)
	}
	return m.st.checkLayout(ctx)
}

// checkRecord refuses a keyspace recorded with another number of
// partitions or an unknown version.
func (m *migration) checkRecord(ctx context.Context) error {
	n, err := RecordedPartitions(ctx, m.st.rdb, m.st.prefix)
	if err != nil {
		return err
	}
	if n != 0 && n != len(m.st.parts) {
		return &layoutError{why: "the keyspace under prefix " + strconv.Quote(m.st.prefix) + " is recorded with " +
			strconv.Itoa(n) + " partitions (" + layoutKey(m.st.prefix) + "), not " + strconv.Itoa(len(m.st.parts)) +
			": migrate with -partitions " + strconv.Itoa(n)}
	}
	return nil
}

// checkNoLiveNodes refuses while nodes are registered as live: their
// registration (prefix:nodes) expires after Redis's now.
func (m *migration) checkNoLiveNodes(ctx context.Context) error {
	now, err := m.st.rdb.Time(ctx).Result()
	if err != nil {
		return failed("migrate: read Redis's clock", err)
	}
	live, err := m.st.rdb.ZRangeByScore(ctx, m.st.nodes(), &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(now.UnixMicro(), 10), Max: "+inf"}).Result()
	if err != nil {
		return failed("migrate: read the live nodes", err)
	}
	if len(live) > 0 {
		return &layoutError{why: "migrate: " + strconv.Itoa(len(live)) + " node(s) registered as live under prefix " +
			strconv.Quote(m.st.prefix) + " (" + strings.Join(live, ", ") + "): stop every node first" +
			" (a stopped node's registration expires within a lease), or force it (WithMigrateForce, stpectl migrate -force)"}
	}
	return nil
}

// pauseKinds pauses the old layout's paused kinds in every partition.
func (m *migration) pauseKinds(ctx context.Context) error {
	kinds, err := m.st.rdb.SMembers(ctx, m.old.Paused()).Result()
	if err != nil {
		return err
	}
	slices.Sort(kinds)
	m.paused = make(map[string]bool, len(kinds))
	for _, k := range kinds {
		m.paused[k] = true
	}
	m.report.PausedKinds = kinds
	if len(kinds) == 0 {
		return nil
	}
	pipe := m.st.rdb.Pipeline()
	for _, p := range m.st.parts {
		pipe.SAdd(ctx, p.Paused(), anys(kinds)...)
	}
	_, err = pipe.Exec(ctx)
	return err
}

// kinds are every kind the old layout has an index of: those its sets of
// kinds name, and those of the index keys found by a scan (a kind index
// whose kind the set no longer names holds no task in a sound keyspace,
// but nothing is left behind).
func (m *migration) kinds(ctx context.Context) ([]string, error) {
	kinds, err := oldKinds(ctx, m.st.rdb, m.old)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		seen[k] = true
	}
	prefix := m.old.IndexPrefix()
	err = m.scan(ctx, globEscape(prefix)+"*", func(_ context.Context, keys []string) error {
		for _, key := range keys {
			rest, ok := strings.CutPrefix(key, prefix)
			if !ok {
				continue
			}
			for _, st := range states {
				if k, ok := strings.CutPrefix(rest, string(st)+":"); ok && !seen[k] {
					seen[k] = true
					kinds = append(kinds, k)
				}
			}
		}
		return nil
	})
	return kinds, err
}

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
func (m *migration) drain(ctx context.Context, state State, src string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		zs, err := m.st.rdb.ZRangeWithScores(ctx, src, 0, int64(m.batch-1)).Result()
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
func (m *migration) moveRound(ctx context.Context, state State, src string, zs []redis.Z) error {
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
	pipe := m.st.rdb.Pipeline()
	members := anys(ids)
	pipe.ZRem(ctx, src, members...)
	for _, st := range states {
		pipe.ZRem(ctx, m.old.StateSet(string(st)), members...)
	}
	for kind, ids := range byKind(tasks) {
		for _, st := range states {
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
	_, cluster := m.st.rdb.(*redis.ClusterClient)
	if _, tag, _ := redisdriver.SplitHashTag(m.st.prefix); tag != "" || !cluster {
		pipe.Del(ctx, keys...)
		return
	}
	for _, k := range keys {
		pipe.Del(ctx, k)
	}
}

// count adds n tasks moved in state to the report.
func (m *migration) count(state State, n int) {
	switch state {
	case Pending:
		m.report.Pending += n
	case Running:
		m.report.Running += n
	case Dead:
		m.report.Dead += n
	case Done:
		m.report.Done += n
	}
}

// readHashes reads the old hashes of ids, in one pipeline; an empty map
// for an ID with none.
func (m *migration) readHashes(ctx context.Context, ids []string) ([]map[string]string, error) {
	pipe := m.st.rdb.Pipeline()
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
func (m *migration) copyTasks(ctx context.Context, state State, tasks []oldTask) error {
	groups := make(map[int][]oldTask)
	for _, t := range tasks {
		i := partitionIndex(t.id, len(m.st.parts))
		groups[i] = append(groups[i], t)
	}
	return eachGroup(groups, func(i int, tasks []oldTask) error {
		p := m.st.parts[i]
		_, err := m.st.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
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
			for _, st := range states {
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
				for _, st := range states {
					tx.ZRem(ctx, p.KindIndex(string(st), kind), kids...)
				}
				tx.ZAdd(ctx, p.KindIndex(string(state), kind), zs...)
				tx.SAdd(ctx, p.Kinds(), kind)
				if state != Pending || !m.paused[kind] {
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
		if err := m.copyTasks(ctx, Pending, tasks); err != nil {
			return err
		}
		pipe := m.st.rdb.Pipeline()
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
	pipe := m.st.rdb.Pipeline()
	vals := make([]*redis.StringCmd, len(ids))
	ttls := make([]*redis.DurationCmd, len(ids))
	for i, id := range ids {
		vals[i] = pipe.Get(ctx, m.old.Mark(id))
		ttls[i] = pipe.PTTL(ctx, m.old.Mark(id))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	pipe = m.st.rdb.Pipeline()
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
			pipe.Set(ctx, m.st.partOf(id).Done(id), v, max(ttl, time.Millisecond))
		case ttl == -1: // no expiry (go-redis passes Redis's -1 through)
			pipe.Set(ctx, m.st.partOf(id).Done(id), v, 0)
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
	pipe = m.st.rdb.Pipeline()
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

// scan calls f with each batch of the keys matching match that hold the
// old layout: on a Redis Cluster, those of the master of the prefix's
// slot (every master if the prefix has no hash tag).
func (m *migration) scan(ctx context.Context, match string, f func(context.Context, []string) error) error {
	servers, err := m.oldServers(ctx)
	if err != nil {
		return err
	}
	for _, srv := range servers {
		var cursor uint64
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			keys, next, err := srv.Scan(ctx, cursor, match, migrateScanCount).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				if err := f(ctx, keys); err != nil {
					return err
				}
			}
			if next == 0 {
				break
			}
			cursor = next
		}
	}
	return nil
}

// oldServers are the servers to scan for the keys of the old layout.
func (m *migration) oldServers(ctx context.Context) ([]redis.Cmdable, error) {
	cc, ok := m.st.rdb.(*redis.ClusterClient)
	if !ok {
		return []redis.Cmdable{m.st.rdb}, nil
	}
	if _, tag, _ := redisdriver.SplitHashTag(m.st.prefix); tag != "" {
		master, err := cc.MasterForKey(ctx, m.old.Kinds())
		if err != nil {
			return nil, err
		}
		return []redis.Cmdable{master}, nil
	}
	var mu sync.Mutex // guards masters
	var masters []redis.Cmdable
	err := cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters = append(masters, c)
		return nil
	})
	return masters, err
}

// eachGroup runs f on every group, migrateParallel at a time, and returns
// the first error.
func eachGroup(groups map[int][]oldTask, f func(int, []oldTask) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards firstErr
		firstErr error
	)
	slots := make(chan struct{}, migrateParallel)
	for i, tasks := range groups {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := f(i, tasks); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// groupByKind groups tasks by kind.
func groupByKind(tasks []oldTask) map[string][]oldTask {
	out := make(map[string][]oldTask)
	for _, t := range tasks {
		out[t.kind] = append(out[t.kind], t)
	}
	return out
}

// byKind are the IDs of tasks by kind, as ZREM's members.
func byKind(tasks []oldTask) map[string][]any {
	out := make(map[string][]any)
	for _, t := range tasks {
		out[t.kind] = append(out[t.kind], t.id)
	}
	return out
}

// anys converts strings to the arguments of a variadic command.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// globEscape escapes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
