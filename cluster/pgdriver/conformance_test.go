package pgdriver_test

import (
	"context"
	"sync"
	"testing"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/drivertest"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The Postgres driver passes the conformance suite every driver passes,
// each check on a fresh database of the package's shared server.

func TestConformance(t *testing.T) {
	drivertest.Run(t, pgHarness())
}

// pgHarness opens drivers on fresh databases; Same opens a second
// driver (another pool, as another node has) on the database of d.
func pgHarness() drivertest.Harness {
	var mu sync.Mutex // guards urls
	urls := map[driver.Driver]string{}
	open := func(t testing.TB, url string, partitions int) driver.Driver {
		t.Helper()
		pool := pgtest.NewPool(t, url)
		if _, err := pgdriver.Migrate(context.Background(), pool); err != nil {
			t.Fatal(err)
		}
		d := newConformanceDriver(t, pool, partitions)
		mu.Lock()
		urls[d] = url
		mu.Unlock()
		return d
	}
	return drivertest.Harness{
		Open: func(t testing.TB, partitions int) driver.Driver {
			return open(t, pgtest.Database(t), partitions)
		},
		Same: func(t testing.TB, d driver.Driver) driver.Driver {
			mu.Lock()
			url := urls[d]
			mu.Unlock()
			return open(t, url, d.Partitions())
		},
	}
}

// newConformanceDriver returns the driver of a store on pool.
func newConformanceDriver(t testing.TB, pool *pgxpool.Pool, partitions int) driver.Driver {
	t.Helper()
	st, err := pgdriver.New(pool, pgdriver.Options{Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	d, err := pgdriver.NewDriver(st)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The driver implements the whole interface.
var _ driver.Driver = (*pgdriver.Driver)(nil)
