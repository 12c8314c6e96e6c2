package message

import "strings"

// KeyRejectionPath is the bag key under which a routed copy lists the
// destinations rejections have routed it to, oldest first, joined by
// commas ("orders-dlq,audit"). It is brighter's own key, beside the five
// Brighter writes (docs/wire-format.md#rejection): a plain string in the
// bag, which a .NET consumer reads as any other bag entry. broker.Router
// reads it to refuse a routing that would send a message round a cycle of
// rejection destinations a second time, and to tell a copy moved back from
// its destination (a redrive) from a cycle: a destination repeated at the
// end of the path counts the redrives routed (docs/adr/0004 decision 12).
const KeyRejectionPath = "rejectionPath"

// MaxRejectionPath is the longest rejectionPath in bytes, Pub/Sub's
// attribute value limit (as MaxRejectionText): past it the oldest entries
// are dropped.
const MaxRejectionPath = MaxRejectionText

// pathSep joins the entries of a rejectionPath. No broker's queue or topic
// names may hold one (SQS, SNS, Pub/Sub and RocketMQ names are letters,
// digits and a few marks); the memory transport's may, and such a name can
// make RoutedTo see a destination that is not on the path (the message
// then stays on its queue, never lost), never miss one that is.
const pathSep = ","

// RoutedTo reports whether a rejection has already routed m to
// destination: whether destination is an entry of m's rejectionPath. A
// missing or empty path, or one that is not a string, holds none.
func RoutedTo(m *Message, destination string) bool {
	if m == nil || destination == "" {
		return false
	}
	path, ok := m.Header.Bag[KeyRejectionPath].(string)
	if !ok || path == "" {
		return false
	}
	return strings.Contains(pathSep+path+pathSep, pathSep+destination+pathSep)
}

// RejectionPath returns m's rejectionPath ("" when it has none).
func RejectionPath(m *Message) string {
	if m == nil {
		return ""
	}
	path, _ := m.Header.Bag[KeyRejectionPath].(string)
	return path
}

// ExtendPath returns path with destination appended, as Stamp writes a
// routed copy's rejectionPath (the oldest entries dropped past
// MaxRejectionPath bytes). broker.Router reads it to see whether a path
// can record one more redrive.
func ExtendPath(path, destination string) string { return extendPath(path, destination) }

// TrailingRun returns how many consecutive entries at the end of path
// (a rejectionPath) satisfy same: 0 for an empty path or one whose last
// entry does not. broker.Router counts with it the redrives a copy has
// had: a destination repeated at the end of its path (docs/adr/0004
// decision 12).
func TrailingRun(path string, same func(entry string) bool) int {
	if path == "" {
		return 0
	}
	n := 0
	for path != "" {
		entry := path
		if i := strings.LastIndex(path, pathSep); i >= 0 {
			entry, path = path[i+len(pathSep):], path[:i]
		} else {
			path = ""
		}
		if !same(entry) {
			break
		}
		n++
	}
	return n
}

// extendPath returns path with destination appended, dropping the oldest
// entries while the result is longer than MaxRejectionPath bytes (a
// destination longer than that on its own is kept whole: names are
// bounded far below it by every transport's name rule).
func extendPath(path, destination string) string {
	if path == "" {
		return destination
	}
	out := path + pathSep + destination
	for len(out) > MaxRejectionPath {
		i := strings.Index(out, pathSep)
		if i < 0 || i+1 >= len(out)-len(destination) {
			return destination
		}
		out = out[i+1:]
	}
	return out
}
