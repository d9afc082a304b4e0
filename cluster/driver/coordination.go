package driver

// Coordination is the group of a Driver's methods described in Driver's doc.
type Coordination interface {
}
