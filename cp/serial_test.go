package cp

import (
	"compress/gzip"
	"encoding/json"
	"os"
)

// A plain serialisation of models for benchmarks on real grounded models
// (cp/testdata/*.json.gz, produced by the cpdump-tagged test).

type sCon struct {
	Kind        ConstraintKind
	Name        string    `json:",omitempty"`
	Enforcement []int32   `json:",omitempty"`
	Vars        []int32   `json:",omitempty"`
	Coeffs      []int64   `json:",omitempty"`
	Lo, Hi      int64     `json:",omitempty"`
	Lits        []int32   `json:",omitempty"`
	Values      []int64   `json:",omitempty"`
	Bins        []int64   `json:",omitempty"`
	Tuples      [][]int64 `json:",omitempty"`
	Index       int32     `json:",omitempty"`
	Target      int32     `json:",omitempty"`
	Loads       []int32   `json:",omitempty"`
	Exprs       []sExpr   `json:",omitempty"`
}

type sExpr struct {
	Vars   []int32
	Coeffs []int64
	Offset int64
}

type sModel struct {
	Doms     [][][2]int64
	Names    []string
	Origin   []varOrigin
	Cons     []sCon
	Obj      *sExpr
	Maximize bool
	Hints    [][2]int64
}

func toS(e LinearExpr) sExpr {
	return sExpr{Vars: varIdx(e.Vars), Coeffs: e.Coeffs, Offset: e.Offset}
}

func (m *Model) fromS(e sExpr) LinearExpr {
	out := LinearExpr{Coeffs: e.Coeffs, Offset: e.Offset}
	for _, v := range e.Vars {
		out.Vars = append(out.Vars, IntVar{m: m, idx: v})
	}
	return out
}

// DumpModelForTest writes m to path as gzipped JSON.
func DumpModelForTest(m *Model, path string) error {
	sm := sModel{Names: m.names, Origin: m.origin}
	for _, d := range m.doms {
		var ivs [][2]int64
		for _, iv := range d.ivs {
			ivs = append(ivs, [2]int64{iv.lo, iv.hi})
		}
		sm.Doms = append(sm.Doms, ivs)
	}
	for _, c := range m.cons {
		sc := sCon{Kind: c.Kind, Name: c.Name, Enforcement: litIdx(c.Enforcement), Vars: varIdx(c.Vars), Coeffs: c.Coeffs,
			Lo: c.Lo, Hi: c.Hi, Lits: litIdx(c.Lits), Values: c.Values, Bins: c.Bins, Tuples: c.Tuples,
			Index: c.Index.idx, Target: c.Target.idx, Loads: varIdx(c.Loads)}
		for _, e := range c.Exprs {
			sc.Exprs = append(sc.Exprs, toS(e))
		}
		sm.Cons = append(sm.Cons, sc)
	}
	if m.obj != nil {
		e := toS(m.obj.Expr)
		sm.Obj, sm.Maximize = &e, m.obj.Maximize
	}
	for _, h := range m.hints {
		sm.Hints = append(sm.Hints, [2]int64{int64(h.v), h.val})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	z := gzip.NewWriter(f)
	if err := json.NewEncoder(z).Encode(&sm); err != nil {
		return err
	}
	return z.Close()
}

// loadModel reads a model written by DumpModelForTest.
func loadModel(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var sm sModel
	if err := json.NewDecoder(z).Decode(&sm); err != nil {
		return nil, err
	}
	m := NewModel()
	for i, ivs := range sm.Doms {
		var d []interval
		for _, iv := range ivs {
			d = append(d, interval{iv[0], iv[1]})
		}
		m.newVar(Domain{d}, sm.Names[i], sm.Origin[i])
	}
	vars := func(xs []int32) []IntVar {
		if xs == nil {
			return nil
		}
		out := make([]IntVar, len(xs))
		for i, x := range xs {
			out[i] = IntVar{m: m, idx: x}
		}
		return out
	}
	lits := func(xs []int32) []Lit {
		if xs == nil {
			return nil
		}
		out := make([]Lit, len(xs))
		for i, x := range xs {
			out[i] = Lit{m: m, idx: x}
		}
		return out
	}
	for _, c := range sm.Cons {
		ci := ConstraintInfo{Kind: c.Kind, Name: c.Name, Enforcement: lits(c.Enforcement), Vars: vars(c.Vars), Coeffs: c.Coeffs,
			Lo: c.Lo, Hi: c.Hi, Lits: lits(c.Lits), Values: c.Values, Bins: c.Bins, Tuples: c.Tuples,
			Index: IntVar{m: m, idx: c.Index}, Target: IntVar{m: m, idx: c.Target}, Loads: vars(c.Loads)}
		for _, e := range c.Exprs {
			ci.Exprs = append(ci.Exprs, m.fromS(e))
		}
		m.cons = append(m.cons, ci)
	}
	if sm.Obj != nil {
		m.obj = &Objective{Expr: m.fromS(*sm.Obj), Maximize: sm.Maximize}
	}
	for _, h := range sm.Hints {
		m.hints = append(m.hints, hint{int32(h[0]), h[1]})
	}
	return m, nil
}
