package driver

// Scheduling is the group of a Driver's methods described in Driver's doc.
type Scheduling interface {
}
