package driver

// Operations is the group of a Driver's methods described in Driver's doc.
type Operations interface {
}
