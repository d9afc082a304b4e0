package redisdriver

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ScanOld calls f with each batch of the keys of prefix that match match
// (a SCAN pattern), on the servers that hold the old layout of prefix, as
// Migrate scans them; the tests of the migration read what it left so.
func ScanOld(ctx context.Context, rdb redis.UniversalClient, prefix, match string, f func(context.Context, []string) error) error {
	m := &migration{rdb: rdb, prefix: prefix, old: OldLayout{Prefix: prefix}}
	return m.scan(ctx, match, f)
}

// GlobEscape escapes the characters SCAN's MATCH pattern treats specially.
func GlobEscape(s string) string { return globEscape(s) }

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
	cc, ok := m.rdb.(*redis.ClusterClient)
	if !ok {
		return []redis.Cmdable{m.rdb}, nil
	}
	if _, tag, _ := SplitHashTag(m.prefix); tag != "" {
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
