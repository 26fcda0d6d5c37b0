package bench

import (
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette is a colour-blind-safe palette (Okabe-Ito).
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xb2, 0xff}, // blue
	color.RGBA{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9e, 0x73, 0xff}, // green
	color.RGBA{0xcc, 0x79, 0xa7, 0xff}, // purple
	color.RGBA{0xe6, 0x9f, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xb4, 0xe9, 0xff}, // sky
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0xf0, 0xe4, 0x42, 0xff}, // yellow
}

func colorAt(i int) color.Color { return palette[i%len(palette)] }

// series is one line of a figure.
type series struct {
	name   string
	xs, ys []float64
	dashed bool
	points bool // a scatter of points instead of a line
	color  int  // palette index + 1; 0: the series' position
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// addSeries adds lines (or scatters) with the palette's colours and a legend entry each.
func addSeries(p *plot.Plot, ss []series) error {
	for i, s := range ss {
		xys := make(plotter.XYs, len(s.xs))
		for j := range s.xs {
			xys[j].X, xys[j].Y = s.xs[j], s.ys[j]
		}
		if len(xys) == 0 {
			continue
		}
		if s.points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = color.RGBA{0x99, 0x99, 0x99, 0xff}
			sc.GlyphStyle.Radius = vg.Points(1.2)
			if s.color > 0 {
				sc.GlyphStyle.Color = colorAt(s.color - 1)
				sc.GlyphStyle.Radius = vg.Points(4)
			}
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			p.Legend.Add(s.name, sc)
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = colorAt(i)
		if s.color > 0 {
			l.Color = colorAt(s.color - 1)
		}
		l.Width = vg.Points(1.5)
		if s.dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	return nil
}

// save writes the figure as name.png and name.svg in the output directory and lists it in section s.
func (r *Runner) save(s *Section, p *plot.Plot, name string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, filepath.Join(r.cfg.Out, name+ext)); err != nil {
			return err
		}
	}
	s.Figures = append(s.Figures, name)
	return nil
}

// lineFigure draws ss as lines and saves it.
func (r *Runner) lineFigure(s *Section, name, title, x, y string, ss []series, tweak func(*plot.Plot)) error {
	p := newPlot(title, x, y)
	if err := addSeries(p, ss); err != nil {
		return err
	}
	if tweak != nil {
		tweak(p)
	}
	return r.save(s, p, name)
}

// barFigure draws groups of bars: one bar per (group, category), categories side by side.
func (r *Runner) barFigure(s *Section, name, title, y string, groups []string, cats []string, vals [][]float64, tweak func(*plot.Plot)) error {
	p := newPlot(title, "", y)
	w := vg.Points(min(60/float64(max(1, len(cats))), 280/float64(max(1, len(groups)*len(cats)))))
	for i, c := range cats {
		v := make(plotter.Values, len(groups))
		for g := range groups {
			v[g] = vals[g][i]
		}
		bc, err := plotter.NewBarChart(v, w)
		if err != nil {
			return err
		}
		bc.Color = colorAt(i)
		bc.LineStyle.Width = 0
		bc.Offset = w * vg.Length(float64(i)-float64(len(cats)-1)/2)
		p.Add(bc)
		p.Legend.Add(c, bc)
	}
	p.NominalX(groups...)
	if tweak != nil {
		tweak(p)
	}
	return r.save(s, p, name)
}

// stackedFigure draws one stacked bar per group, its layers the categories.
func (r *Runner) stackedFigure(s *Section, name, title, y string, groups []string, cats []string, vals [][]float64) error {
	p := newPlot(title, "", y)
	var below *plotter.BarChart
	for i, c := range cats {
		v := make(plotter.Values, len(groups))
		for g := range groups {
			v[g] = vals[g][i]
		}
		bc, err := plotter.NewBarChart(v, vg.Points(30))
		if err != nil {
			return err
		}
		bc.Color = colorAt(i)
		bc.LineStyle.Width = 0
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		p.Legend.Add(c, bc)
	}
	p.NominalX(groups...)
	return r.save(s, p, name)
}

// logY puts the Y axis on a log scale.
func logY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
}

// logX puts the X axis on a log scale.
func logX(p *plot.Plot) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
}
