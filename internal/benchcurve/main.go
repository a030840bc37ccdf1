package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/internal/stats"
)

// point is one benchmark line: a curve, a size and its metrics by unit.
type point struct {
	curve   string
	size    int
	metrics map[string]float64
}

// sizeElem is a size element, with the #NN that go test appends to a
// repeated sub-benchmark name.
var sizeElem = regexp.MustCompile(`^(.*)/[a-z_-]+=(\d+)(?:#\d+)?$`)

// parse reads benchmark lines into passes of points; units keeps each
// curve's units in the order first seen.
func parse(r io.Reader) (passes [][]point, units map[string][]string, err error) {
	units = map[string][]string{}
	var cur []point
	for b, err := range stats.Results(r) {
		if err != nil {
			return nil, nil, err
		}
		s := sizeElem.FindStringSubmatch(b.Name)
		if s == nil {
			continue
		}
		size, _ := strconv.Atoi(s[2])
		p := point{curve: s[1], size: size, metrics: map[string]float64{}}
		for _, x := range b.Metrics {
			p.metrics[x.Unit] = x.Value
			if !slices.Contains(units[p.curve], x.Unit) {
				units[p.curve] = append(units[p.curve], x.Unit)
			}
		}
		if slices.ContainsFunc(cur, func(q point) bool { return q.curve == p.curve && q.size == p.size }) {
			passes, cur = append(passes, cur), nil
		}
		cur = append(cur, p)
	}
	if len(cur) > 0 {
		passes = append(passes, cur)
	}
	return passes, units, nil
}

// find returns the pass's point of curve at size.
func find(pass []point, curve string, size int) (point, bool) {
	i := slices.IndexFunc(pass, func(q point) bool { return q.curve == curve && q.size == size })
	if i < 0 {
		return point{}, false
	}
	return pass[i], true
}

// report prints one Markdown table per curve: per size, every metric's
// median and, in parentheses, the median of its per-pass ratios to the
// smallest size.
func report(w io.Writer, passes [][]point, units map[string][]string) {
	curves := slices.Sorted(func(yield func(string) bool) {
		for c := range units {
			if !yield(c) {
				return
			}
		}
	})
	fmt.Fprintf(w, "%d passes; medians (median of the per-pass ratios to the smallest size)\n", len(passes))
	for _, c := range curves {
		var sizes []int
		for _, p := range passes {
			for _, q := range p {
				if q.curve == c && !slices.Contains(sizes, q.size) {
					sizes = append(sizes, q.size)
				}
			}
		}
		slices.Sort(sizes)
		fmt.Fprintf(w, "\n%s\n\n| size | %s |\n|---|%s\n", c, strings.Join(units[c], " | "), strings.Repeat("---|", len(units[c])))
		for _, n := range sizes {
			cells := []string{}
			for _, u := range units[c] {
				var vals, ratios []float64
				for _, p := range passes {
					q, ok := find(p, c, n)
					if !ok {
						continue
					}
					vals = append(vals, q.metrics[u])
					if b, ok := find(p, c, sizes[0]); ok && b.metrics[u] != 0 {
						ratios = append(ratios, q.metrics[u]/b.metrics[u])
					}
				}
				cells = append(cells, fmt.Sprintf("%s (%.2f×)", number(stats.Median(vals)), stats.Median(ratios)))
			}
			fmt.Fprintf(w, "| %d | %s |\n", n, strings.Join(cells, " | "))
		}
	}
}

// number prints a metric without an exponent: whole from 100 up, three
// significant digits below.
func number(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// bound is a -max check: at the curve's largest size, the median of the
// per-pass ratios of unit to the smallest size is at most max.
type bound struct {
	curve, unit string
	max         float64
}

// parseBounds reads "curve:unit<=max,…".
func parseBounds(s string) ([]bound, error) {
	var out []bound
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		cu, m, ok := strings.Cut(f, "<=")
		i := strings.LastIndexByte(cu, ':')
		v, err := strconv.ParseFloat(m, 64)
		if !ok || i < 0 || err != nil {
			return nil, fmt.Errorf("-max: %q is not curve:unit<=ratio", f)
		}
		out = append(out, bound{curve: cu[:i], unit: cu[i+1:], max: v})
	}
	return out, nil
}

// check returns the bounds the passes break (or cannot show).
func check(passes [][]point, bounds []bound) []string {
	var bad []string
	for _, b := range bounds {
		var sizes []int
		for _, p := range passes {
			for _, q := range p {
				if q.curve == b.curve {
					sizes = append(sizes, q.size)
				}
			}
		}
		if len(sizes) == 0 {
			bad = append(bad, b.curve+": not measured")
			continue
		}
		lo, hi := slices.Min(sizes), slices.Max(sizes)
		var ratios []float64
		for _, p := range passes {
			x, ok1 := find(p, b.curve, hi)
			y, ok2 := find(p, b.curve, lo)
			if ok1 && ok2 && y.metrics[b.unit] != 0 {
				ratios = append(ratios, x.metrics[b.unit]/y.metrics[b.unit])
			}
		}
		if r := stats.Median(ratios); len(ratios) == 0 || r > b.max {
			bad = append(bad, fmt.Sprintf("%s: %s at %d is %.2f× its value at %d, over the bound %.2f×", b.curve, b.unit, hi, r, lo, b.max))
		}
	}
	return bad
}

func main() {
	maxFlag := flag.String("max", "", "bounds to check, curve:unit<=ratio,… (the median per-pass ratio of the largest size to the smallest); exit 1 if one is broken")
	flag.Parse()
	bounds, err := parseBounds(*maxFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcurve:", err)
		os.Exit(2)
	}
	passes, units, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcurve:", err)
		os.Exit(1)
	}
	if len(passes) == 0 {
		fmt.Fprintln(os.Stderr, "benchcurve: no benchmark line with a size (name/x=N) on stdin")
		os.Exit(1)
	}
	report(os.Stdout, passes, units)
	bad := check(passes, bounds)
	for _, b := range bad {
		fmt.Fprintln(os.Stderr, "benchcurve: bound broken:", b)
	}
	if len(bad) > 0 {
		os.Exit(1)
	}
	if len(bounds) > 0 {
		fmt.Printf("\n%d bounds hold\n", len(bounds))
	}
}
