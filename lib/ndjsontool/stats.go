package ndjsontool

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentry/agentry/lib/cli"
	"github.com/agentry/agentry/lib/ndjson"
)

// StatsOptions are the options of stats.
type StatsOptions struct {
	Fields    []string // paths of the numbers to aggregate
	By        string   // group by the value at this path; "" for one group
	Quantiles bool     // p50 and p95, approximate
	JSON      bool
}

// Stats prints, per group and field, the count of numbers, how many lines
// had something else there (skipped), and their sum, min, max and mean;
// with Quantiles, p50 and p95 from a sketch accurate to 1% of the value.
// Memory grows with the number of groups (and, with quantiles, with the
// numbers' range: a few thousand buckets at most), not with the input.
func Stats(ctx context.Context, st *Stream, o StatsOptions) error {
	if len(o.Fields) == 0 {
		return cli.Usagef("stats needs at least one path")
	}
	fps := make([]fastPath, len(o.Fields))
	for i, f := range o.Fields {
		fps[i] = parseFastPath(f)
	}
	byFP := parseFastPath(o.By)
	agg := &statsTable{fields: o.Fields, groups: map[string]*statsGroup{}, quantiles: o.Quantiles}
	// Workers validate and extract; the ordered stage aggregates.
	sk, err := st.eachLineThen(ctx, finding{paths: append([]fastPath{byFP}, fps...)}, func(out, line []byte, lv lineView) []byte {
		group := "null"
		if o.By != "" {
			group = groupJSON(lv.foundAt(0, line, o.By, byFP))
		}
		out = binary.AppendUvarint(out, uint64(len(group)))
		out = append(out, group...)
		for i, f := range o.Fields {
			v := lv.foundAt(i+1, line, f, fps[i]) // the check found them all on its way
			n, ok := number(v)
			if !ok {
				out = append(out, 0)
				continue
			}
			out = binary.LittleEndian.AppendUint64(append(out, 1), math.Float64bits(n))
		}
		return out
	}, func(framed []byte) []byte {
		agg.add(framed)
		return nil
	})
	if err != nil {
		return err
	}
	if err := agg.print(st, o); err != nil {
		return err
	}
	return sk.report(st)
}

// groupJSON is a group's value as canonical JSON: strings re-encoded from
// their text, so escapes do not split a group; missing is null.
func groupJSON(v value) string {
	switch {
	case !v.ok:
		return "null"
	case v.isString():
		b, _ := json.Marshal(string(ndjson.AppendUnescaped(nil, v.raw, false)))
		return string(b)
	case v.raw[0] == '{' || v.raw[0] == '[':
		return string(compact(v.raw))
	}
	return string(v.raw)
}

// number is the value as a number, if it is one.
func number(v value) (float64, bool) {
	if !v.ok || !(v.raw[0] == '-' || v.raw[0] >= '0' && v.raw[0] <= '9') {
		return 0, false
	}
	n, err := strconv.ParseFloat(str(v.raw), 64)
	return n, err == nil
}

type statsTable struct {
	fields    []string
	order     []string
	groups    map[string]*statsGroup
	quantiles bool
}

type statsGroup struct{ fields []fieldStats }

type fieldStats struct {
	count, skipped int64
	sum, min, max  float64
	sketch         *sketch
}

// add aggregates one chunk's framed lines.
func (t *statsTable) add(b []byte) {
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		key := string(b[k : k+int(n)])
		b = b[k+int(n):]
		g := t.groups[key]
		if g == nil {
			g = &statsGroup{fields: make([]fieldStats, len(t.fields))}
			t.groups[key] = g
			t.order = append(t.order, key)
		}
		for i := range t.fields {
			f := &g.fields[i]
			if b[0] == 0 {
				f.skipped++
				b = b[1:]
				continue
			}
			x := math.Float64frombits(binary.LittleEndian.Uint64(b[1:9]))
			b = b[9:]
			if f.count == 0 || x < f.min {
				f.min = x
			}
			if f.count == 0 || x > f.max {
				f.max = x
			}
			f.count++
			f.sum += x
			if t.quantiles {
				if f.sketch == nil {
					f.sketch = newSketch()
				}
				f.sketch.add(x)
			}
		}
	}
}

// statsRow is one line of stats --json.
type statsRow struct {
	By      json.RawMessage `json:"by,omitempty"`
	Field   string          `json:"field"`
	Count   int64           `json:"count"`
	Skipped int64           `json:"skipped"`
	Sum     float64         `json:"sum"`
	Min     *float64        `json:"min"`
	Max     *float64        `json:"max"`
	Mean    *float64        `json:"mean"`
	P50     *float64        `json:"p50,omitempty"`
	P95     *float64        `json:"p95,omitempty"`
}

func (t *statsTable) rows(by bool) []statsRow {
	var rows []statsRow
	for _, key := range t.order {
		for i, f := range t.groups[key].fields {
			r := statsRow{Field: t.fields[i], Count: f.count, Skipped: f.skipped, Sum: f.sum}
			if by {
				r.By = json.RawMessage(key)
			}
			if f.count > 0 {
				mean := f.sum / float64(f.count)
				r.Min, r.Max, r.Mean = &f.min, &f.max, &mean
				if f.sketch != nil {
					p50, p95 := f.sketch.quantile(0.5), f.sketch.quantile(0.95)
					r.P50, r.P95 = &p50, &p95
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func (t *statsTable) print(st *Stream, o StatsOptions) error {
	rows := t.rows(o.By != "")
	if o.JSON {
		var b []byte
		for _, r := range rows {
			line, _ := json.Marshal(r)
			b = append(append(b, line...), '\n')
		}
		_, err := st.Out.Write(b)
		return err
	}
	w := tabwriter.NewWriter(st.Out, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{"FIELD", "COUNT", "SKIPPED", "SUM", "MIN", "MAX", "MEAN"}
	if o.By != "" {
		head = append([]string{strings.ToUpper(o.By)}, head...)
	}
	if o.Quantiles {
		head = append(head, "P50", "P95")
	}
	fmt.Fprintln(w, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		cells := []string{r.Field, strconv.FormatInt(r.Count, 10), strconv.FormatInt(r.Skipped, 10), num(&r.Sum), num(r.Min), num(r.Max), num(r.Mean)}
		if o.By != "" {
			cells = append([]string{groupText(r.By)}, cells...)
		}
		if o.Quantiles {
			cells = append(cells, num(r.P50), num(r.P95))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
	}
	return w.Flush()
}

// groupText is a group's value for the text table: a string's text
// (escaped as get's TSV is), other values as JSON, missing as null.
func groupText(raw json.RawMessage) string {
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return string(tsvEscape(nil, s))
	}
	return string(raw)
}

// num formats a number for people: integers whole, others shortest; "-"
// for none.
func num(p *float64) string {
	if p == nil {
		return "-"
	}
	v := *p
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 8, 64)
}

// sketch approximates quantiles with logarithmic buckets: every value
// falls in a bucket whose bounds are within 2% of each other, so the
// quantile it returns is within 1% of a value of the right rank.
type sketch struct {
	pos, neg map[int]int64
	zeros    int64
	n        int64
}

const sketchGamma = 1.02

func newSketch() *sketch { return &sketch{pos: map[int]int64{}, neg: map[int]int64{}} }

func bucket(x float64) int { return int(math.Ceil(math.Log(x) / math.Log(sketchGamma))) }

func (s *sketch) add(x float64) {
	s.n++
	switch {
	case x > 0:
		s.pos[bucket(x)]++
	case x < 0:
		s.neg[bucket(-x)]++
	default:
		s.zeros++
	}
}

// quantile is the value of rank q (0..1), approximately.
func (s *sketch) quantile(q float64) float64 {
	rank := int64(math.Round(q * float64(s.n-1)))
	mid := func(i int) float64 { return 2 * math.Pow(sketchGamma, float64(i)) / (sketchGamma + 1) }
	negs := sortedKeys(s.neg, true)
	for _, i := range negs {
		if rank < s.neg[i] {
			return -mid(i)
		}
		rank -= s.neg[i]
	}
	if rank < s.zeros {
		return 0
	}
	rank -= s.zeros
	for _, i := range sortedKeys(s.pos, false) {
		if rank < s.pos[i] {
			return mid(i)
		}
		rank -= s.pos[i]
	}
	return 0
}

func sortedKeys(m map[int]int64, desc bool) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if desc {
		slices.SortFunc(keys, func(a, b int) int { return b - a })
	} else {
		slices.Sort(keys)
	}
	return keys
}
