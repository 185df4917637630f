package ndjsontool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentry/agentry/lib/ndjson"
	"github.com/agentry/agentry/lib/protocol"
)

// CheckOptions are the options of check.
type CheckOptions struct {
	// Protocol, when "agent-host", classifies every line as an agent-host
	// v1 message or unknown with a reason.
	Protocol string
	JSON     bool
	// Schema, when set, is a JSON Schema every line must conform to.
	Schema Schema
}

// Schema checks one JSON value: "" when it conforms, else the first
// violation. lib/schema's *Schema is one; check needs only this method.
type Schema interface {
	Check(value []byte) (violation string)
}

// Problems check reports. malformed_json, invalid_utf8 and too_long are
// always problems; not_an_object and unknown_type under --protocol;
// schema_violation under --schema; the rest only under --strict.
const (
	probMalformed      = "malformed_json"
	probUTF8           = "invalid_utf8"
	probTooLong        = "too_long"
	probNotObject      = protocol.ReasonNotAnObject
	probUnknownType    = protocol.ReasonUnknownType
	probBlank          = "blank_line"
	probCRLF           = "crlf"
	probBOM            = "bom"
	probNoFinalNewline = "no_final_newline"
	probSchema         = "schema_violation"
)

type problem struct {
	line   int64 // within the chunk until emitted, then absolute
	kind   string
	detail string
}

type checkChunk struct {
	total, valid, blank int64
	types               map[string]*int64
	problems            []problem
	endsInNewline       bool
	scratch             []byte // a line's type, unescaped
	run                 runCounter
}

var typePath = fastPath{"type"}

// CheckSummary is what check prints at the end; with --json it is the last
// line, with "type":"summary".
type CheckSummary struct {
	Type         string           `json:"type"`
	Protocol     string           `json:"protocol,omitempty"`
	Lines        int64            `json:"lines"`
	Valid        int64            `json:"valid"`
	Blank        int64            `json:"blank"`
	Bad          int64            `json:"bad"`
	Problems     map[string]int64 `json:"problems"`
	Types        map[string]int64 `json:"types"`
	BOM          bool             `json:"bom"`
	FinalNewline bool             `json:"finalNewline"`
}

// Check validates every line (JSON and UTF-8), reports each problem with its
// line number, and prints a summary. It fails (exit 1) when any line has a
// problem.
func Check(ctx context.Context, st *Stream, o CheckOptions) error {
	if o.Protocol != "" && o.Protocol != "agent-host" {
		return &OptionError{Option: "Protocol", Value: o.Protocol, Reason: "is not one known (agent-host is)"}
	}
	c := ndjson.NewChunker(st.In, st.MaxLine)
	sum := CheckSummary{Type: "summary", Protocol: o.Protocol, Problems: map[string]int64{}, Types: map[string]int64{}, FinalNewline: true}
	var line int64
	lastBad := int64(0) // problems come in line order
	var out bytes.Buffer
	emit := func(p problem) error {
		sum.Problems[p.kind]++
		if p.line != lastBad && p.kind != probBOM && p.kind != probNoFinalNewline {
			sum.Bad++
			lastBad = p.line
		}
		out.Reset()
		file, fileLine := "", p.line
		if st.Locate != nil {
			file, fileLine = st.Locate(p.line)
		}
		if o.JSON {
			b, _ := json.Marshal(struct {
				Type    string `json:"type"`
				File    string `json:"file,omitempty"`
				Line    int64  `json:"line"`
				Problem string `json:"problem"`
				Detail  string `json:"detail"`
			}{"problem", file, fileLine, p.kind, p.detail})
			out.Write(b)
			out.WriteByte('\n')
			_, err := st.Out.Write(out.Bytes())
			return err
		}
		st.Voice.Notef("%s: %s", st.at(p.line), p.detail)
		return nil
	}
	first := true
	bitmaps := newBitmaps(st.Workers)
	err := ndjson.Each(ctx, c, st.Workers, func(ch *ndjson.Chunk) *checkChunk {
		var ck ndjson.Checker
		ck.GiveBitmap(bitmaps.get())
		r := checkLines(&ck, ch, o.Protocol != "", st.Strict, st.maxLine(), o.Schema)
		bitmaps.put(ck.TakeBitmap())
		return r
	}, func(ch *ndjson.Chunk, r *checkChunk) error {
		defer c.Release(ch)
		if first && ch.BOM {
			sum.BOM = true
			if st.Strict {
				if err := emit(problem{line: 1, kind: probBOM, detail: "starts with a byte order mark"}); err != nil {
					return err
				}
			}
		}
		first = false
		for _, p := range r.problems {
			p.line += line
			if err := emit(p); err != nil {
				return err
			}
		}
		line += r.total
		sum.Lines += r.total
		sum.Valid += r.valid
		sum.Blank += r.blank
		for k, n := range r.types {
			sum.Types[k] += *n
		}
		if r.total > 0 || ch.Skipped != nil {
			sum.FinalNewline = r.endsInNewline
		}
		return nil
	})
	if err != nil {
		return err
	}
	if first && c.BOM() {
		// A byte order mark and nothing else: no chunk came to say so.
		sum.BOM = true
		if st.Strict {
			if err := emit(problem{line: 1, kind: probBOM, detail: "starts with a byte order mark"}); err != nil {
				return err
			}
		}
	}
	if !sum.FinalNewline && sum.Lines > 0 && st.Strict {
		if err := emit(problem{line: line, kind: probNoFinalNewline, detail: "the last line has no newline"}); err != nil {
			return err
		}
	}
	if sum.Lines == 0 && st.unread() {
		return nil
	}
	if err := printSummary(st, o, &sum); err != nil {
		return err
	}
	if sum.Bad > 0 || (st.Strict && len(sum.Problems) > 0) {
		return &CheckError{Bad: sum.Bad, Lines: sum.Lines, BOM: sum.Problems[probBOM] > 0, NoFinalNewline: sum.Problems[probNoFinalNewline] > 0}
	}
	return nil
}

// checkLines checks one chunk with ck. A skipped over-long line comes
// after its lines, as the chunk's last.
func checkLines(ck *ndjson.Checker, ch *ndjson.Chunk, proto, strict bool, maxLine int, sch Schema) *checkChunk {
	r := &checkChunk{types: map[string]*int64{}}
	data := ch.Data
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		r.total++
		crlf := len(l) > 0 && l[len(l)-1] == '\r'
		if crlf {
			l = l[:len(l)-1]
			if strict {
				r.problems = append(r.problems, problem{r.total, probCRLF, "ends in CRLF"})
			}
		}
		r.checkLine(ck, l, proto, strict, sch)
	}
	r.endsInNewline = len(ch.Data) > 0 && ch.Data[len(ch.Data)-1] == '\n'
	if ch.Skipped != nil {
		r.total++
		r.problems = append(r.problems, problem{r.total, probTooLong,
			fmt.Sprintf("%d bytes, over the %s line cap; skipped unread", ch.Skipped.Size, capText(maxLine))})
		r.endsInNewline = true
	}
	return r
}

func (r *checkChunk) checkLine(ck *ndjson.Checker, l []byte, proto, strict bool, sch Schema) {
	p, w := ck.Find(l, typePath)
	switch p {
	case ndjson.Blank:
		r.blank++
		if strict {
			r.problems = append(r.problems, problem{r.total, probBlank, "blank line"})
		}
		return
	case ndjson.BadJSON:
		r.problems = append(r.problems, problem{r.total, probMalformed, "not valid JSON: " + snippet(l)})
		return
	case ndjson.BadUTF8:
		r.problems = append(r.problems, problem{r.total, probUTF8, "invalid UTF-8 in a string"})
		return
	}
	// Valid JSON: counted valid, and by its type, whatever else is wrong
	// with it (the schema, the protocol): a line can be valid and bad.
	r.valid++
	if sch != nil {
		if v := sch.Check(l); v != "" {
			r.problems = append(r.problems, problem{r.total, probSchema, "does not conform to the schema: " + v})
		}
	}
	if !proto {
		lv := lineView{marks: ck.Marks(), where: w}
		if v := lv.found(l, "type", typePath); v.ok && v.isString() {
			r.countText(v.raw)
		}
		return
	}
	typ, reason := protocol.Classify(l)
	switch reason {
	case "":
		r.count(typ)
	case protocol.ReasonNotAnObject:
		r.problems = append(r.problems, problem{r.total, probNotObject, "not an object: " + snippet(l)})
	default:
		d := "no string \"type\" field"
		if typ != "" {
			d = fmt.Sprintf("unknown message type %q", typ)
		}
		r.problems = append(r.problems, problem{r.total, probUnknownType, d})
	}
}

func (r *checkChunk) count(typ string) { bump(r.types, typ) }

// countText counts a string type given as JSON.
func (r *checkChunk) countText(raw []byte) {
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		r.scratch = ndjson.AppendUnescaped(r.scratch[:0], raw, false)
		text = r.scratch
	}
	r.run.add(r.types, text)
}

// snippet shows the start of a bad line, safely quoted.
func snippet(l []byte) string {
	const max = 40
	if len(l) > max {
		return fmt.Sprintf("%q…", l[:max])
	}
	return fmt.Sprintf("%q", l)
}

func printSummary(st *Stream, o CheckOptions, s *CheckSummary) error {
	if o.JSON {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = st.Out.Write(append(b, '\n'))
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %d valid, %d blank, %d bad\n", s.Lines, plural(s.Lines, "line"), s.Valid, s.Blank, s.Bad)
	if len(s.Problems) > 0 {
		fmt.Fprintf(&b, "problems: %s\n", joinCounts(s.Problems))
	}
	if len(s.Types) > 0 {
		fmt.Fprintf(&b, "types: %s\n", joinCounts(s.Types))
	}
	_, err := io.WriteString(st.Out, b.String())
	return err
}

// joinCounts prints a map as "a 3, b 1", largest first.
func joinCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", tsvEscape(nil, k), m[k]) // one line, whatever the type holds
	}
	return strings.Join(parts, ", ")
}
