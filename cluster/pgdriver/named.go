package pgdriver

import "strings"

// named replaces the named placeholders of sql (as "$token") by their
// positional ones (as "$2"), so a fragment shared by several statements
// can say what it takes.
func named(sql string, args map[string]string) string {
	pairs := make([]string, 0, 2*len(args))
	for k, v := range args {
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...).Replace(sql)
}
