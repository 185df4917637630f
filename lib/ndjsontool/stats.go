package ndjsontool

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/linetime"
	"github.com/agentry/agentry/lib/ndjson"
)

// StatsOptions are the options of stats.
type StatsOptions struct {
	Fields    []string // paths of the numbers to aggregate
	By        string   // group by the value at this path; "" for one group
	Quantiles bool     // p50 and p95, approximate
	JSON      bool
	// Every, when not 0, makes a row per bucket of this length of the
	// line's time (the stream's time window must be set) and group,
	// buckets aligned in Zone (linetime.Bucket; UTC when nil).
	Every time.Duration
	Zone  *time.Location
}

// Stats prints, per group and field, the count of numbers, how many lines
// had something else there (skipped), and their sum, min, max and mean;
// with Quantiles, p50 and p95 from a sketch accurate to 1% of the value.
// Memory grows with the number of groups (and, with quantiles, with the
// numbers' range: a few thousand buckets at most), not with the input.
func Stats(ctx context.Context, st *Stream, o StatsOptions) error {
	if len(o.Fields) == 0 {
		return &OptionError{Option: "Fields", Reason: "must hold at least one path"}
	}
	fps := make([]fastPath, len(o.Fields))
	for i, f := range o.Fields {
		fps[i] = parseFastPath(f)
	}
	byFP := parseFastPath(o.By)
	if o.Every > 0 && st.Time == nil {
		return &OptionError{Option: "Every", Reason: "needs the stream's Time, where each line's time is"}
	}
	if o.Zone == nil {
		o.Zone = time.UTC
	}
	agg := &statsTable{fields: o.Fields, groups: map[string]*statsGroup{}, quantiles: o.Quantiles, every: o.Every > 0}
	// Workers validate and extract; the ordered stage aggregates. Each
	// line is framed as its group's key and how it is shown, then per
	// field a tag: 0 for no number; 1 and a double; 2, a double and the
	// number's text, for a number a double does not hold exactly enough
	// to compare (min and max are then decided, and shown, by the text).
	sk, err := st.eachLineThen(ctx, finding{paths: append([]fastPath{byFP}, fps...)}, func(out, line []byte, lv lineView) []byte {
		var v value
		if o.By != "" {
			v = lv.foundAt(0, line, o.By, byFP)
		}
		if o.Every > 0 {
			out = binary.LittleEndian.AppendUint64(out, uint64(linetime.Bucket(lv.time, o.Every, o.Zone).Unix()))
		}
		out = appendGroup(out, v)
		for i, f := range o.Fields {
			v := lv.foundAt(i+1, line, f, fps[i]) // the check found them all on its way
			if !isNumber(v) {
				out = append(out, 0)
				continue
			}
			x, exact := jsoncmp.Double(v.raw)
			if exact {
				out = binary.LittleEndian.AppendUint64(append(out, 1), math.Float64bits(x))
				continue
			}
			out = binary.LittleEndian.AppendUint64(append(out, 2), math.Float64bits(x))
			out = binary.AppendUvarint(out, uint64(len(v.raw)))
			out = append(out, v.raw...)
		}
		return out
	}, func(framed []byte) []byte {
		agg.add(framed)
		return nil
	})
	if err != nil {
		return err
	}
	if len(agg.groups) == 0 && st.unread() {
		return nil
	}
	if err := agg.print(st, o); err != nil {
		return err
	}
	return sk.report(st)
}

// appendGroup frames a group's value: its key (a string's text after 's',
// else its jsoncmp key: 1, 1.0 and 1E0 are one group), then what shows
// it, its compact JSON, for values other than strings (a string's is made
// from its text when it is printed). Missing is null.
func appendGroup(out []byte, v value) []byte {
	if !v.ok {
		v = value{raw: []byte("null"), ok: true}
	}
	start := len(out)
	out = binary.AppendUvarint(out, 0)
	keyAt := len(out)
	var shown []byte
	if v.isString() {
		out = ndjson.AppendUnescaped(append(out, 's'), v.raw, false)
	} else {
		out = jsoncmp.AppendEqualKey(out, v.raw)
		shown = v.raw
		if shown[0] == '{' || shown[0] == '[' {
			shown = compact(shown)
		}
	}
	out = frame(out, start, keyAt)
	out = binary.AppendUvarint(out, uint64(len(shown)))
	return append(out, shown...)
}

type statsTable struct {
	fields    []string
	order     []*statsGroup
	groups    map[string]*statsGroup
	quantiles bool
	every     bool // each line's record starts with its bucket
}

type statsGroup struct {
	shown  []byte // the group's value as JSON
	fields []fieldStats
	bucket int64 // the start of its time bucket, Unix seconds (--every)
}

type fieldStats struct {
	count, skipped int64
	sum, min, max  float64
	// minText and maxText are min's and max's text when a double does not
	// hold them exactly; else "".
	minText, maxText string
	sketch           *sketch
}

// add aggregates one chunk's framed lines.
func (t *statsTable) add(b []byte) {
	var buf []byte
	for len(b) > 0 {
		var bucket int64
		var bucketKey []byte
		if t.every {
			bucketKey, b = b[:8], b[8:]
			bucket = int64(binary.LittleEndian.Uint64(bucketKey))
		}
		key, rest := unframe(b)
		shown, rest := unframe(rest)
		b = rest
		if t.every {
			buf = append(append(buf[:0], bucketKey...), key...)
			key = buf
		}
		g := t.groups[string(key)]
		if g == nil {
			g = &statsGroup{fields: make([]fieldStats, len(t.fields)), bucket: bucket}
			if k := key[len(bucketKey):]; k[0] == 's' {
				g.shown, _ = json.Marshal(string(k[1:]))
			} else {
				g.shown = append([]byte(nil), shown...)
			}
			t.groups[string(key)] = g
			t.order = append(t.order, g)
		}
		for i := range t.fields {
			f := &g.fields[i]
			tag := b[0]
			if tag == 0 {
				f.skipped++
				b = b[1:]
				continue
			}
			x := math.Float64frombits(binary.LittleEndian.Uint64(b[1:9]))
			b = b[9:]
			var text []byte
			if tag == 2 {
				text, b = unframe(b)
			}
			f.addNumber(x, text, t.quantiles)
		}
	}
}

// addNumber adds x, whose text is given when a double does not hold it
// exactly.
func (f *fieldStats) addNumber(x float64, text []byte, quantiles bool) {
	if f.count == 0 || less(x, text, f.min, f.minText) {
		f.min, f.minText = x, string(text)
	}
	if f.count == 0 || less(f.max, f.maxText, x, text) {
		f.max, f.maxText = x, string(text)
	}
	f.count++
	f.sum += x
	if quantiles {
		if f.sketch == nil {
			f.sketch = newSketch()
		}
		f.sketch.add(x)
	}
}

// less orders two numbers exactly: by their doubles when they differ (a
// double is never on the wrong side of another), else by their texts,
// when either has one (a double's shortest text is its decimal's, for
// a number held exactly).
func less[T ~string | ~[]byte, U ~string | ~[]byte](x float64, xt T, y float64, yt U) bool {
	if x != y || len(xt) == 0 && len(yt) == 0 {
		return x < y
	}
	a, b := []byte(string(xt)), []byte(string(yt))
	if len(a) == 0 {
		a = strconv.AppendFloat(nil, x, 'g', -1, 64)
	}
	if len(b) == 0 {
		b = strconv.AppendFloat(nil, y, 'g', -1, 64)
	}
	return jsoncmp.CompareNumbers(a, b) < 0
}

// statsRow is one line of stats --json: numbers as JSON texts, see
// jsonNumber; min and max nil for none.
type statsRow struct {
	Time    string          `json:"time,omitempty"`
	By      json.RawMessage `json:"by,omitempty"`
	Field   string          `json:"field"`
	Count   int64           `json:"count"`
	Skipped int64           `json:"skipped"`
	Sum     json.RawMessage `json:"sum"`
	Min     json.RawMessage `json:"min"`
	Max     json.RawMessage `json:"max"`
	Mean    json.RawMessage `json:"mean"`
	P50     json.RawMessage `json:"p50,omitempty"`
	P95     json.RawMessage `json:"p95,omitempty"`
}

// statsCells is one row of the text table, but for the group.
type statsCells struct {
	count, skipped                int64
	sum, min, max, mean, p50, p95 string
}

// cells formats f's figures, each with number (jsonNumber or textNumber),
// min and max as their own text where a double does not hold them
// exactly; a figure there is none of is "".
func (f *fieldStats) cells(number func(float64) string) statsCells {
	c := statsCells{count: f.count, skipped: f.skipped, sum: number(f.sum)}
	if f.count == 0 {
		return c
	}
	c.min, c.max = f.minText, f.maxText
	if c.min == "" {
		c.min = number(f.min)
	}
	if c.max == "" {
		c.max = number(f.max)
	}
	c.mean = number(f.sum / float64(f.count))
	if f.sketch != nil {
		c.p50, c.p95 = number(f.sketch.shown(0.5, f.min, f.max)), number(f.sketch.shown(0.95, f.min, f.max))
	}
	return c
}

func (t *statsTable) print(st *Stream, o StatsOptions) error {
	when := func(g *statsGroup) string { return "" }
	if t.every {
		slices.SortStableFunc(t.order, func(a, b *statsGroup) int { return cmp.Compare(a.bucket, b.bucket) })
		when = func(g *statsGroup) string { return time.Unix(g.bucket, 0).In(o.Zone).Format(time.RFC3339) }
	}
	if o.JSON {
		var b []byte
		for _, g := range t.order {
			for i := range g.fields {
				c := g.fields[i].cells(jsonNumber)
				r := statsRow{Time: when(g), Field: t.fields[i], Count: c.count, Skipped: c.skipped, Sum: raw(c.sum),
					Min: rawOr(c.min, "null"), Max: rawOr(c.max, "null"), Mean: rawOr(c.mean, "null"), P50: raw(c.p50), P95: raw(c.p95)}
				if o.By != "" {
					r.By = g.shown
				}
				line, err := json.Marshal(r)
				if err != nil {
					return err
				}
				b = append(append(b, line...), '\n')
			}
		}
		_, err := st.Out.Write(b)
		return err
	}
	w := tabwriter.NewWriter(st.Out, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{"FIELD", "COUNT", "SKIPPED", "SUM", "MIN", "MAX", "MEAN"}
	if o.By != "" {
		head = append([]string{strings.ToUpper(o.By)}, head...)
	}
	if t.every {
		head = append([]string{"TIME"}, head...)
	}
	if o.Quantiles {
		head = append(head, "P50", "P95")
	}
	fmt.Fprintln(w, strings.Join(head, "\t")+"\t")
	for _, g := range t.order {
		for i := range g.fields {
			c := g.fields[i].cells(textNumber)
			cells := []string{t.fields[i], strconv.FormatInt(c.count, 10), strconv.FormatInt(c.skipped, 10), c.sum, or(c.min, "-"), or(c.max, "-"), or(c.mean, "-")}
			if o.By != "" {
				cells = append([]string{groupText(g.shown)}, cells...)
			}
			if t.every {
				cells = append([]string{when(g)}, cells...)
			}
			if o.Quantiles {
				cells = append(cells, or(c.p50, "-"), or(c.p95, "-"))
			}
			fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
		}
	}
	return w.Flush()
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func rawOr(s, none string) json.RawMessage { return raw(or(s, none)) }

func or(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// groupText is a group's value for the text table: a string as a cell
// (stringCell), other values as JSON, missing as null.
func groupText(raw []byte) string {
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return stringCell(s)
	}
	return string(raw)
}

// nonFinite names the results no JSON number can be: a sum past the range
// of doubles, or a mean of +Inf and -Inf. Text and JSON say them alike,
// JSON as strings.
func nonFinite(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return "NaN"
}

// jsonNumber formats a number as JSON: as encoding/json would, or for a
// value that is not finite its name as a string ("Infinity").
func jsonNumber(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return `"` + nonFinite(v) + `"`
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// textNumber formats a number for people: integers whole, others to 8
// significant digits, values that are not finite by name.
func textNumber(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return nonFinite(v)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 8, 64)
}

// sketch approximates quantiles with logarithmic buckets: every value
// falls in a bucket whose bounds are within 1% of each other, so the
// quantile it returns is within 0.5% of a value of the right rank; shown
// rounds that to the digits it has, within 1%.
type sketch struct {
	pos, neg map[int]int64
	zeros    int64
	n        int64
	fraction bool // a value added was not a whole number
}

const sketchGamma = 1.01

// shown is the quantile of rank q as it is printed: within [lo, hi] (the
// least and the greatest value), to three significant digits (0.5% at
// most), and, when every value was whole, a whole number; below 100 that
// is the exact value of the rank, the estimate being within 0.5 of it.
func (s *sketch) shown(q, lo, hi float64) float64 {
	v := min(max(s.quantile(q), lo), hi)
	if !s.fraction && math.Abs(v) < 100 {
		return math.Round(v)
	}
	if v != 0 {
		scale := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
		v = math.Round(v*scale) / scale
	}
	if !s.fraction {
		v = math.Round(v)
	}
	return v
}

func newSketch() *sketch { return &sketch{pos: map[int]int64{}, neg: map[int]int64{}} }

func bucket(x float64) int { return int(math.Ceil(math.Log(x) / math.Log(sketchGamma))) }

func (s *sketch) add(x float64) {
	s.n++
	if x != math.Trunc(x) {
		s.fraction = true
	}
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
