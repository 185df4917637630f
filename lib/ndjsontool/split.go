package ndjsontool

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"strconv"

	"compress/gzip"
	"github.com/agentry/agentry/lib/jsoncmp"
	"github.com/agentry/agentry/lib/ndjson"
)

// SplitOptions are split's.
type SplitOptions struct {
	Key  string // the path whose value names each line's file
	Dir  string // made if need be
	Open int    // files open at once, at most (> 0)
	Gzip bool   // write NAME.ndjson.gz, a gzip member per opening
}

// maxName bounds a file's name before its suffix: a longer one is cut and
// ends in "%~" and a hash of the whole, so it stays unique.
const maxName = 200

// SplitName is the file name, without its suffix, of a value (raw JSON)
// at the key: safe on any Unix file system and inside its directory
// whatever the value — bytes other than ASCII letters, digits, '-' and
// '_' (and '.' after the first byte) are written %XX, so a name never
// holds '/', never is "." or "..", never starts with '.'. A string is its
// text; a string that would be read as another JSON value (true, 12) has
// its first byte written %XX, so it never shares a file with that value.
// A number is its canonical decimal (1, 1.0 and 1E0 are "1", as NUMBERS
// says) when a double holds it exactly, else its text; other values their
// compact JSON.
func SplitName(raw []byte) string {
	var text []byte
	str := raw[0] == '"'
	switch {
	case str:
		text = ndjson.AppendUnescaped(nil, raw, false)
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		text = raw
		if f, ok := jsoncmp.Double(raw); ok {
			if f == 0 {
				f = 0 // -0
			}
			text = bytes.ReplaceAll(strconv.AppendFloat(nil, f, 'g', -1, 64), []byte("e+"), []byte("e"))
			if a := max(f, -f); a >= 1e-6 && a < 1e21 {
				text = strconv.AppendFloat(nil, f, 'f', -1, 64)
			}
		}
	default:
		text = compact(raw)
	}
	escapeFirst := str && len(text) > 0 && ndjson.Check(text) == ndjson.Valid
	b := make([]byte, 0, len(text)+8)
	for i, c := range text {
		safe := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
		if safe && !(i == 0 && escapeFirst) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
	}
	if len(text) == 0 {
		b = append(b, "%22%22"...) // the empty string
	}
	if len(b) > maxName {
		sum := sha256.Sum256(b)
		b = append(append(b[:maxName-18], "%~"...), hex.EncodeToString(sum[:8])...)
	}
	return string(b)
}

// splitFile is an open output file.
type splitFile struct {
	name string
	f    *os.File
	z    *gzip.Writer
	w    *bufio.Writer
	at   *list.Element
}

func (s *splitFile) close() error {
	err := s.w.Flush()
	if s.z != nil {
		if e := s.z.Close(); err == nil {
			err = e
		}
	}
	if e := s.f.Close(); err == nil {
		err = e
	}
	return err
}

// Split writes each valid line, byte for byte, to DIR/NAME.ndjson (or
// .ndjson.gz), NAME being SplitName of its value at Key; a line without
// the key goes to no file, and is counted. Files are made afresh
// (truncated) when first opened in a run, appended to when opened again;
// at most Open are open at once, the least recently written closed
// first. Files are opened through an os.Root at Dir, so no name, nor a
// link put in Dir, reaches outside it.
func Split(ctx context.Context, st *Stream, o SplitOptions) error {
	if err := os.MkdirAll(o.Dir, 0o777); err != nil {
		return err
	}
	root, err := os.OpenRoot(o.Dir)
	if err != nil {
		return err
	}
	defer root.Close()
	suffix := ".ndjson"
	if o.Gzip {
		suffix += ".gz"
	}
	open := map[string]*splitFile{}
	lru := list.New()
	made := map[string]bool{}
	var missing int64
	var werr error
	closeAll := func() error {
		var err error
		for _, s := range open {
			if e := s.close(); err == nil {
				err = e
			}
		}
		clear(open)
		return err
	}
	get := func(name string) (*splitFile, error) {
		if s := open[name]; s != nil {
			lru.MoveToFront(s.at)
			return s, nil
		}
		if len(open) >= o.Open {
			old := lru.Remove(lru.Back()).(*splitFile)
			delete(open, old.name)
			if err := old.close(); err != nil {
				return nil, err
			}
		}
		flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
		if !made[name] {
			flag |= os.O_TRUNC
			made[name] = true
		}
		f, err := root.OpenFile(name+suffix, flag, 0o666)
		if err != nil {
			return nil, err
		}
		s := &splitFile{name: name, f: f}
		var w io.Writer = f
		if o.Gzip {
			s.z = gzip.NewWriter(f)
			w = s.z
		}
		s.w = bufio.NewWriterSize(w, 32<<10)
		s.at = lru.PushFront(s)
		open[name] = s
		return s, nil
	}
	fp := parseFastPath(o.Key)
	sk, err := st.eachLineThen(ctx, finding{path: fp}, func(out, line []byte, lv lineView) []byte {
		v := lv.found(line, o.Key, fp)
		name := ""
		if v.ok {
			name = SplitName(v.raw)
		}
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		out = binary.AppendUvarint(out, uint64(len(line)))
		return append(out, line...)
	}, func(framed []byte) []byte {
		for b := framed; len(b) > 0 && werr == nil; {
			var name, line []byte
			name, b = unframe(b)
			line, b = unframe(b)
			if len(name) == 0 {
				missing++
				continue
			}
			s, err := get(string(name))
			if err != nil {
				werr = err
				break
			}
			s.w.Write(line)
			if err := s.w.WriteByte('\n'); err != nil {
				werr = err
			}
		}
		return nil
	})
	if e := closeAll(); err == nil && werr == nil {
		werr = e
	}
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if missing > 0 {
		st.Voice.Notef("%d %s had no value at %s and went to no file", missing, plural(missing, "line"), o.Key)
	}
	return sk.report(st)
}
