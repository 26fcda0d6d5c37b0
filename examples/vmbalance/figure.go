package main

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// stacks draws, for each host, one box per VM (its memory as a
// percentage of the host's capacity), stacked from the largest VM up:
// the paper's Figure (load distribution before and after). Boxes of VMs
// that migrate are highlighted.
type stacks struct {
	in   *Instance
	p    Placement
	hot  map[string]bool
	hots color.Color
}

var (
	boxColor  = color.RGBA{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff}
	moveColor = color.RGBA{R: 0xdd, G: 0x84, B: 0x52, A: 0xff}
	edgeColor = color.White
)

func (s stacks) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	byHost := map[string][]VM{}
	for _, v := range s.in.VMs {
		byHost[s.p[v.Name]] = append(byHost[s.p[v.Name]], v)
	}
	for i, h := range s.in.Hosts {
		vms := byHost[h.Name]
		sort.Slice(vms, func(a, b int) bool {
			if vms[a].Mem != vms[b].Mem {
				return vms[a].Mem > vms[b].Mem
			}
			return vms[a].Name < vms[b].Name
		})
		var base float64
		x0, x1 := tx(float64(i)+0.6), tx(float64(i)+1.4)
		for _, v := range vms {
			top := base + 100*float64(v.Mem)/float64(h.Mem)
			r := vg.Rectangle{Min: vg.Point{X: x0, Y: ty(base)}, Max: vg.Point{X: x1, Y: ty(top)}}
			col := color.Color(boxColor)
			if s.hot[v.Name] {
				col = s.hots
			}
			c.SetColor(col)
			c.Fill(r.Path())
			c.SetColor(edgeColor)
			c.SetLineWidth(vg.Points(0.3))
			c.Stroke(r.Path())
			base = top
		}
	}
}

func (s stacks) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0.5, float64(len(s.in.Hosts)) + 0.5, 0, 100
}

func panel(in *Instance, p Placement, moved map[string]bool, title string) (*plot.Plot, error) {
	plt := plot.New()
	lo, hi := in.Range(p)
	plt.Title.Text = fmt.Sprintf("%s: %s%%–%s%%", title, pct(lo), pct(hi))
	plt.X.Label.Text = "host"
	plt.Y.Label.Text = "memory utilisation (%)"
	plt.Y.Min, plt.Y.Max = 0, 100
	var ticks []plot.Tick
	for i := range in.Hosts {
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: fmt.Sprint(i + 1)})
	}
	plt.X.Tick.Marker = plot.ConstantTicks(ticks)
	plt.Add(stacks{in: in, p: p, hot: moved, hots: moveColor})
	for _, y := range []int64{lo, hi} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0.5, Y: float64(y) / 100}, {X: float64(len(in.Hosts)) + 0.5, Y: float64(y) / 100}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		plt.Add(l)
	}
	return plt, nil
}

// WriteFigure writes the before/after figure as name.png and name.svg in
// dir. VMs that migrate are orange (on their old host before, on their new
// host after); dashed lines mark the least and most utilised hosts.
func WriteFigure(dir, name string, in *Instance, after Placement) ([]string, error) {
	moved := map[string]bool{}
	for _, v := range in.Migrations(after) {
		moved[v.Name] = true
	}
	before, err := panel(in, in.Current(), moved, "before")
	if err != nil {
		return nil, err
	}
	aft, err := panel(in, after, moved, fmt.Sprintf("after %d migrations", len(moved)))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w, h := 11*vg.Inch, 4*vg.Inch
	draws := func(c draw.Canvas) {
		plots := [][]*plot.Plot{{before, aft}}
		cs := plot.Align(plots, draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Centimeter, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}, c)
		before.Draw(cs[0][0])
		aft.Draw(cs[0][1])
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120), vgimg.UseBackgroundColor(color.White))
	draws(draw.New(img))
	svg := vgsvg.New(w, h)
	draws(draw.New(svg))
	var out []string
	pngPath := filepath.Join(dir, name+".png")
	svgPath := filepath.Join(dir, name+".svg")
	if err := writeFile(pngPath, vgimg.PngCanvas{Canvas: img}.WriteTo); err != nil {
		return nil, err
	}
	if err := writeFile(svgPath, svg.WriteTo); err != nil {
		return nil, err
	}
	out = append(out, pngPath, svgPath)
	return out, nil
}

func writeFile(path string, write func(io.Writer) (int64, error)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
