package cmdline

import (
	"strconv"
	"strings"
)

// A shellCmd is one simple command of a shell line.
type shellCmd struct {
	words     []string
	pipeStart bool // it begins a pipeline: it is not after a '|'
	endless   bool // the condition of a loop that never ends by itself: while true, while :, until false
}

// shellCommands splits a shell line into its simple commands, each as its
// words with the shell's quoting removed: '…', "…" and $'…' quote, a
// backslash escapes one character, and &&, ||, ;, |, &, ( , ) and a
// newline outside quotes end a command. The shell's own syntax is not a
// command: reserved words at a command's start (if then elif else fi do
// done while until { } !) are dropped, and so are the headers of for,
// select and case, case's patterns, a function's name and a comment. It
// is enough to read a command line a person wrote, not a shell: no
// expansion, no here-documents, and a redirection stays a word.
func shellCommands(line string) []shellCmd {
	var p shellParser
	for i := 0; i < len(line); i++ {
		i = p.char(line, i)
	}
	p.endCommand(false)
	return p.cmds
}

// shellParser is shellCommands' state between two characters.
type shellParser struct {
	cmds       []shellCmd
	words      []string
	word       strings.Builder
	inWord     bool // word has begun (an empty '' is a word)
	quoted     bool // word has a quote or an escape: never a reserved word
	afterPipe  bool
	header     bool // skipping a for/select header, up to its command's end
	caseHeader bool // skipping case's word, up to "in"
	pattern    bool // skipping a case pattern, up to its ')'
	caseDepth  int
	skipWord   int  // words to drop (a function's name)
	loopCond   bool // the next command is a while's condition
	untilCond  bool // … an until's
}

// char reads the character at i (and what it starts) and returns the
// index of the last character it read.
func (p *shellParser) char(line string, i int) int {
	c := line[i]
	next := byte(0)
	if i+1 < len(line) {
		next = line[i+1]
	}
	switch {
	case c == '\\' && i+1 < len(line):
		i++
		if line[i] != '\n' {
			p.word.WriteByte(line[i])
			p.inWord, p.quoted = true, true
		}
	case c == '\'':
		j := strings.IndexByte(line[i+1:], '\'')
		if j < 0 {
			j = len(line) - i - 1
		}
		p.word.WriteString(line[i+1 : i+1+j])
		p.inWord, p.quoted = true, true
		i += j + 1
	case c == '$' && next == '\'':
		s, n := ansiC(line[i+2:])
		p.word.WriteString(s)
		p.inWord, p.quoted = true, true
		i += 1 + n
	case c == '$' && next == '(':
		// $(…): one word, whatever is inside, up to its ')'.
		depth := 0
		for ; i < len(line); i++ {
			p.word.WriteByte(line[i])
			if line[i] == '(' {
				depth++
			} else if line[i] == ')' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		p.inWord = true
	case c == '`':
		j := strings.IndexByte(line[i+1:], '`')
		if j < 0 {
			j = len(line) - i - 1
		}
		p.word.WriteString(line[i:min(i+2+j, len(line))]) // `…`: one word
		p.inWord = true
		i += j + 1
	case c == '"':
		p.inWord, p.quoted = true, true
		for i++; i < len(line) && line[i] != '"'; i++ {
			if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`\n", line[i+1]) >= 0 {
				i++
			}
			p.word.WriteByte(line[i])
		}
	case c == '#' && !p.inWord:
		for i < len(line) && line[i] != '\n' {
			i++
		}
		i-- // the newline ends the command
	case c == ' ' || c == '\t':
		p.endWord()
	case p.pattern && (c == '|' || c == '('):
		p.endWord()
	case p.pattern && c == ')':
		p.endWord()
		p.pattern = false
	case p.pattern && (c == ';' || c == '\n'):
		p.endWord()
	case c == ';' && next == ';' && p.caseDepth > 0:
		// ;; (or ;;&) ends a case branch: a pattern comes next.
		p.endCommand(false)
		i++
		if i+1 < len(line) && line[i+1] == '&' {
			i++
		}
		p.pattern = true
	case c == ';' || c == '\n':
		p.endCommand(false)
	case c == '(' && next == ')':
		// name() { …; }: a function's definition, not a command.
		p.word.Reset()
		p.inWord, p.quoted, p.words = false, false, nil
		i++
	case c == '(' || c == ')':
		p.endCommand(false)
	case c == '|':
		if next == '|' {
			i++
			p.endCommand(false)
		} else {
			p.endCommand(true)
		}
	case c == '&':
		if i > 0 && (line[i-1] == '>' || line[i-1] == '<') || next == '>' {
			p.word.WriteByte(c) // 2>&1, &>file: a redirection
			p.inWord = true
			break
		}
		if next == '&' {
			i++
		}
		p.endCommand(false)
	default:
		p.word.WriteByte(c)
		p.inWord = true
	}
	return i
}

// endWord ends the word being read: a reserved word at a command's start
// is dropped, and so is a word of a header or a pattern.
func (p *shellParser) endWord() {
	if !p.inWord {
		return
	}
	w, quoted := p.word.String(), p.quoted
	p.word.Reset()
	p.inWord, p.quoted = false, false
	switch {
	case p.pattern:
		if w == "esac" && !quoted {
			p.pattern = false
			p.caseDepth--
		}
		return
	case p.caseHeader:
		if w == "in" && !quoted {
			p.caseHeader, p.pattern = false, true
		}
		return
	case p.header:
		return
	case p.skipWord > 0:
		p.skipWord--
		return
	case len(p.words) == 0 && !quoted:
		switch w {
		case "if", "then", "elif", "else", "fi", "do", "done", "{", "}", "!":
			return
		case "while":
			p.loopCond = true
			return
		case "until":
			p.untilCond = true
			return
		case "for", "select":
			p.header = true
			return
		case "case":
			p.caseHeader = true
			p.caseDepth++
			return
		case "esac":
			p.caseDepth--
			return
		case "function":
			p.skipWord = 1
			return
		}
	}
	p.words = append(p.words, w)
}

// endCommand ends the command being read; pipe tells that a '|' ended it.
func (p *shellParser) endCommand(pipe bool) {
	p.endWord()
	p.header = false
	if len(p.words) > 0 {
		one := len(p.words) == 1
		endless := p.loopCond && one && (p.words[0] == "true" || p.words[0] == ":") ||
			p.untilCond && one && p.words[0] == "false"
		p.cmds = append(p.cmds, shellCmd{words: p.words, pipeStart: !p.afterPipe, endless: endless})
		p.words = nil
		p.loopCond, p.untilCond = false, false
	}
	p.afterPipe = pipe
}

// ansiC reads the body of a $'…' word, s being what follows its opening
// quote: the text with its escapes made characters, and how many bytes
// it read, the closing quote included.
func ansiC(s string) (string, int) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return b.String(), i + 1
		}
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				j++
			}
			if v, err := strconv.ParseUint(s[i+1:j], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i = j - 1
			} else {
				b.WriteString(`\x`)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default: // \\ \' \" \? and the unknown
			if !strings.ContainsRune(`\'"?`, rune(e)) {
				b.WriteByte('\\')
			}
			b.WriteByte(e)
		}
	}
	return b.String(), len(s)
}

// ShellLine is a command's words as a shell line that runs them: a word
// that the shell would split or expand is single-quoted, a word with a
// control character (a newline, a tab) is $'…'-quoted, and an empty word
// is shown as a pair of single quotes. A command of one word is a shell
// line already (svc runs it with sh -c) and is returned as it is.
func ShellLine(argv []string) string {
	if len(argv) == 1 {
		return argv[0]
	}
	quoted := make([]string, len(argv))
	for i, w := range argv {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// DisplayLine is ShellLine for one line of a table (svc ls): a command of
// one word that has a control character is shown $'…'-quoted, as one
// would give it to svc start, so that a newline in it does not break the
// line.
func DisplayLine(argv []string) string {
	if len(argv) == 1 && hasControl(argv[0]) {
		return ansiQuote(argv[0])
	}
	return ShellLine(argv)
}

// shellQuote quotes one word for the shell, only when it needs it.
func shellQuote(w string) string {
	if w == "" {
		return "''"
	}
	if hasControl(w) {
		return ansiQuote(w)
	}
	plain := true
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// hasControl tells whether w has an ASCII control character.
func hasControl(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 0x20 || w[i] == 0x7f {
			return true
		}
	}
	return false
}

// ansiQuote is w $'…'-quoted: its control characters, backslashes and
// single quotes escaped, the rest as it is.
func ansiQuote(w string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\\', '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\x` + strconv.FormatUint(uint64(c)>>4, 16) + strconv.FormatUint(uint64(c)&15, 16))
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}
