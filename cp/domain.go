package cp

import (
	"math"
	"slices"
	"sort"
)

// interval is a closed range of int64 values, lo <= hi.
type interval struct{ lo, hi int64 }

// Domain is an immutable set of int64 values stored as sorted, disjoint,
// non-adjacent closed intervals. The zero Domain is empty.
type Domain struct{ ivs []interval }

// NewDomain returns the interval [lo, hi]; empty if lo > hi.
func NewDomain(lo, hi int64) Domain {
	if lo > hi {
		return Domain{}
	}
	return Domain{ivs: []interval{{lo, hi}}}
}

// DomainFromValues returns the set of the given values (any order,
// duplicates allowed).
func DomainFromValues(vals ...int64) Domain {
	if len(vals) == 0 {
		return Domain{}
	}
	s := vals
	if !slices.IsSorted(s) {
		s = append([]int64(nil), vals...)
		slices.Sort(s)
	}
	// Count the intervals first: one allocation of the exact size (a
	// zone's nodes are every third code, so as many intervals as values).
	n := 1
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1] && s[i] != s[i-1]+1 {
			n++
		}
	}
	ivs := make([]interval, 0, n)
	for _, v := range s {
		if n := len(ivs); n > 0 && (v == ivs[n-1].hi || (ivs[n-1].hi != math.MaxInt64 && v == ivs[n-1].hi+1)) {
			ivs[n-1].hi = v
			continue
		}
		ivs = append(ivs, interval{v, v})
	}
	return Domain{ivs: ivs}
}

// domainFromIntervals normalises arbitrary intervals into a Domain.
func domainFromIntervals(in []interval) Domain {
	s := make([]interval, 0, len(in))
	for _, iv := range in {
		if iv.lo <= iv.hi {
			s = append(s, iv)
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].lo < s[j].lo })
	var out []interval
	for _, iv := range s {
		if n := len(out); n > 0 && (out[n-1].hi == math.MaxInt64 || iv.lo <= out[n-1].hi+1) {
			if iv.hi > out[n-1].hi {
				out[n-1].hi = iv.hi
			}
			continue
		}
		out = append(out, iv)
	}
	return Domain{ivs: out}
}

// Contains reports whether v is in the domain.
func (d Domain) Contains(v int64) bool {
	i := sort.Search(len(d.ivs), func(i int) bool { return d.ivs[i].hi >= v })
	return i < len(d.ivs) && d.ivs[i].lo <= v
}

// Min returns the smallest value; 0 for an empty domain.
func (d Domain) Min() int64 {
	if len(d.ivs) == 0 {
		return 0
	}
	return d.ivs[0].lo
}

// Max returns the largest value; 0 for an empty domain.
func (d Domain) Max() int64 {
	if len(d.ivs) == 0 {
		return 0
	}
	return d.ivs[len(d.ivs)-1].hi
}

// Size returns the number of values, saturating at math.MaxInt64.
func (d Domain) Size() int64 {
	var n int64
	for _, iv := range d.ivs {
		w := uint64(iv.hi-iv.lo) + 1
		if w == 0 || w > uint64(math.MaxInt64-n) {
			return math.MaxInt64
		}
		n += int64(w)
	}
	return n
}

// IsEmpty reports whether the domain has no values.
func (d Domain) IsEmpty() bool { return len(d.ivs) == 0 }

// Values lists the values in ascending order. The caller promises the
// domain is small.
func (d Domain) Values() []int64 {
	var out []int64
	for _, iv := range d.ivs {
		for v := iv.lo; ; v++ {
			out = append(out, v)
			if v == iv.hi {
				break
			}
		}
	}
	return out
}

// Intersect returns the values in both d and o.
func (d Domain) Intersect(o Domain) Domain {
	var out []interval
	i, j := 0, 0
	for i < len(d.ivs) && j < len(o.ivs) {
		a, b := d.ivs[i], o.ivs[j]
		lo, hi := max(a.lo, b.lo), min(a.hi, b.hi)
		if lo <= hi {
			out = append(out, interval{lo, hi})
		}
		if a.hi < b.hi {
			i++
		} else {
			j++
		}
	}
	return Domain{ivs: out}
}

// Complement returns all int64 values not in d.
func (d Domain) Complement() Domain {
	var out []interval
	next := int64(math.MinInt64)
	open := true
	for _, iv := range d.ivs {
		if iv.lo > next {
			out = append(out, interval{next, iv.lo - 1})
		}
		if iv.hi == math.MaxInt64 {
			open = false
			break
		}
		next = iv.hi + 1
	}
	if open {
		out = append(out, interval{next, math.MaxInt64})
	}
	return Domain{ivs: out}
}

// NumIntervals returns the number of maximal intervals of the domain.
func (d Domain) NumIntervals() int { return len(d.ivs) }

// Interval returns the i-th interval [lo, hi] of the domain, ascending
// (0 <= i < NumIntervals): with NumIntervals, a walk over the domain
// that allocates nothing, where Intervals copies them.
func (d Domain) Interval(i int) (lo, hi int64) { return d.ivs[i].lo, d.ivs[i].hi }

// subsetOf reports whether every value of d is in o, without building
// the intersection.
func (d Domain) subsetOf(o Domain) bool {
	j := 0
	for _, iv := range d.ivs {
		lo := iv.lo
		for {
			for j < len(o.ivs) && o.ivs[j].hi < lo {
				j++
			}
			if j == len(o.ivs) || o.ivs[j].lo > lo {
				return false
			}
			if o.ivs[j].hi >= iv.hi {
				break
			}
			// o's interval ends inside iv: the rest must start right after.
			lo = o.ivs[j].hi + 1
			j++
		}
	}
	return true
}

// Intervals returns the domain as [lo, hi] pairs, ascending; useful for
// translating a model to other solvers.
func (d Domain) Intervals() [][2]int64 {
	out := make([][2]int64, len(d.ivs))
	for i, iv := range d.ivs {
		out[i] = [2]int64{iv.lo, iv.hi}
	}
	return out
}
