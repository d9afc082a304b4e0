package driver

// Claims is the group of a Driver's methods described in Driver's doc.
type Claims interface {
}
