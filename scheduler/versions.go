package scheduler

import (
	"strings"
)

// Table versions (weave.SolveOptions.TableVersions): the scheduler writes
// the state database itself, every write through exec, so it knows which
// tables a write changed. Each table's version is the write count
// (s.version) at its latest write; a model's solve reads again only the
// tables written since its last one, and takes the others (the nodes and
// their labels, batch after batch) from it. A statement whose table is not
// recognised counts as a write to every table.

// writtenTable returns the table a statement writes: the name after
// "insert into", "delete from" or "update".
func writtenTable(q string) (string, bool) {
	f := firstWords(q, 3)
	var name string
	switch {
	case len(f) >= 3 && strings.EqualFold(f[0], "insert") && strings.EqualFold(f[1], "into"):
		name = f[2]
	case len(f) >= 3 && strings.EqualFold(f[0], "delete") && strings.EqualFold(f[1], "from"):
		name = f[2]
	case len(f) >= 2 && strings.EqualFold(f[0], "update"):
		name = f[1]
	default:
		return "", false
	}
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = name[:i]
	}
	name = strings.ToLower(name)
	if name == "" || strings.ContainsAny(name, `".`) {
		return "", false // quoted or qualified: not one of the schema's plain names
	}
	return name, true
}

// firstWords returns the first n words of q (fewer if it has fewer): a
// batch's writes are hundreds of statements, each read for its table only.
func firstWords(q string, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		q = strings.TrimLeft(q, " \t\r\n")
		if q == "" {
			break
		}
		i := strings.IndexAny(q, " \t\r\n")
		if i < 0 {
			i = len(q)
		}
		out, q = append(out, q[:i]), q[i:]
	}
	return out
}

// noteWrites records the tables st writes at the current write count
// (s.mu held).
func (s *Scheduler) noteWrites(st []stmt) {
	if s.written == nil {
		s.written = map[string]uint64{}
	}
	for _, x := range st {
		if t, ok := writtenTable(x.q); ok {
			s.written[t] = s.version
		} else {
			s.writtenAll = s.version
		}
	}
}

// tableVersions returns the version of every state table (s.mu held).
func (s *Scheduler) tableVersions() map[string]uint64 {
	if s.tables == nil {
		s.tables = stateTables()
	}
	out := make(map[string]uint64, len(s.tables))
	for _, t := range s.tables {
		out[t] = max(s.written[t], s.writtenAll)
	}
	return out
}
