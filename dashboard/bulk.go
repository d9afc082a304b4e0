package dashboard

// bulkActions turns the listings' bulk actions on once the cluster has them.
const bulkActions = false
