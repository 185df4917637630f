package codex

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentry/agentry/lib/host"
)

// fileChanges are a file change item's changes, as the file_change
// input holds them: {"changes": [{path, kind, diff}]}.
type fileChanges struct {
	Changes []struct {
		Path string `json:"path"`
		Kind struct {
			Type     string `json:"type"`
			MovePath string `json:"move_path"`
		} `json:"kind"`
		Diff string `json:"diff"`
	} `json:"changes"`
}

// changeDiffs are the edits of a file_change call. An added file is its
// content, newly; a deleted one its content, gone; an update is one diff
// per hunk of its unified diff, each holding the hunk's lines before and
// after the change, context included — the changed region, not the whole
// file. A moved file's diffs are at its new path.
func changeDiffs(input json.RawMessage) []host.Diff {
	var in fileChanges
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	var out []host.Diff
	for _, c := range in.Changes {
		if c.Path == "" {
			continue
		}
		switch c.Kind.Type {
		case "add":
			out = append(out, host.Diff{Path: c.Path, New: c.Diff})
		case "delete":
			old := c.Diff
			out = append(out, host.Diff{Path: c.Path, Old: &old, New: ""})
		case "update":
			path := c.Path
			if c.Kind.MovePath != "" {
				path = c.Kind.MovePath
			}
			for _, h := range hunks(c.Diff) {
				old := h.old
				out = append(out, host.Diff{Path: path, Old: &old, New: h.new})
			}
		}
	}
	return out
}

// hunk is one hunk of a unified diff: its text before and after.
type hunk struct{ old, new string }

// hunks reads a unified diff's hunks, each as long as its @@ header says:
// what is around them (file headers, codex's "Moved to:" trailer) is
// skipped.
func hunks(diff string) []hunk {
	var hs []hunk
	var old, new strings.Builder
	oldLeft, newLeft := 0, 0 // the lines the hunk still has
	in := false
	last := byte(0) // the kind of the line before: ' ', '-' or '+'
	for _, line := range strings.SplitAfter(diff, "\n") {
		if line == "" {
			continue
		}
		if in && line[0] == '\\' { // "\ No newline at end of file": the line before has none
			if last == ' ' || last == '-' {
				trimNewline(&old)
			}
			if last == ' ' || last == '+' {
				trimNewline(&new)
			}
			continue
		}
		if in && oldLeft <= 0 && newLeft <= 0 {
			hs = append(hs, hunk{old.String(), new.String()})
			old.Reset()
			new.Reset()
			in = false
		}
		if !in {
			if o, n, ok := hunkHeader(line); ok {
				oldLeft, newLeft, in = o, n, true
			}
			continue
		}
		kind, body := line[0], line[1:]
		switch kind {
		case ' ':
			old.WriteString(body)
			new.WriteString(body)
			oldLeft--
			newLeft--
		case '-':
			old.WriteString(body)
			oldLeft--
		case '+':
			new.WriteString(body)
			newLeft--
		default: // not a hunk's line: the hunk was shorter than it said
			oldLeft, newLeft = 0, 0
		}
		last = kind
	}
	if in {
		hs = append(hs, hunk{old.String(), new.String()})
	}
	return hs
}

// hunkHeader reads "@@ -a,b +c,d @@": the hunk's old and new line counts
// (b and d; 1 when left out).
func hunkHeader(line string) (oldN, newN int, ok bool) {
	var rest string
	if rest, ok = strings.CutPrefix(line, "@@ -"); !ok {
		return 0, 0, false
	}
	ranges, _, ok := strings.Cut(rest, " @@")
	if !ok {
		return 0, 0, false
	}
	o, n, ok := strings.Cut(ranges, " +")
	if !ok {
		return 0, 0, false
	}
	count := func(r string) (int, bool) {
		_, c, found := strings.Cut(r, ",")
		if !found {
			return 1, true
		}
		v, err := strconv.Atoi(c)
		return v, err == nil && v >= 0
	}
	oldN, ok1 := count(o)
	newN, ok2 := count(n)
	return oldN, newN, ok1 && ok2
}

// trimNewline drops the newline b ends with.
func trimNewline(b *strings.Builder) {
	s := strings.TrimSuffix(b.String(), "\n")
	b.Reset()
	b.WriteString(s)
}
