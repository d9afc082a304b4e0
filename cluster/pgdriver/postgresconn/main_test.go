package postgresconn_test

import (
	"testing"

	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) }
