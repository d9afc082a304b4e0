package dashboard

import "github.com/go-stpe/scheduler/cluster"

// bulkActions turns the listings' bulk actions on once the cluster has them.
const bulkActions = false

func bulkActionsFor(cluster.State) []string { return nil }
