package svc

import "strings"

// shellCommands splits a shell line into its simple commands, each as its
// words with the shell's quoting removed: '…' and "…" quote, a backslash
// escapes one character, and &&, ||, ;, |, & and a newline outside quotes
// end a command. It is enough to read a command line a person wrote, not a
// shell: no expansion, no here-documents, and a redirection stays a word.
// pipeStart[i] tells whether command i begins a pipeline (is not after a
// '|').
func shellCommands(line string) (cmds [][]string, pipeStart []bool) {
	var words []string
	var word strings.Builder
	inWord, afterPipe := false, false
	endWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCommand := func(pipe bool) {
		endWord()
		if len(words) > 0 {
			cmds, pipeStart = append(cmds, words), append(pipeStart, !afterPipe)
			words = nil
		}
		afterPipe = pipe
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			if line[i] != '\n' {
				word.WriteByte(line[i])
				inWord = true
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`\n", line[i+1]) >= 0 {
					i++
				}
				word.WriteByte(line[i])
			}
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '\n':
			endCommand(false)
		case c == '|':
			if i+1 < len(line) && line[i+1] == '|' {
				i++
				endCommand(false)
			} else {
				endCommand(true)
			}
		case c == '&':
			if i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>' {
				word.WriteByte(c) // 2>&1, &>file: a redirection
				inWord = true
				continue
			}
			if i+1 < len(line) && line[i+1] == '&' {
				i++
			}
			endCommand(false)
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCommand(false)
	return cmds, pipeStart
}

// lastPipelineHead is the first command of a line's last pipeline: in
// "cd web && npm run dev | tee log", npm run dev.
func lastPipelineHead(line string) []string {
	cmds, pipeStart := shellCommands(line)
	for i := len(cmds) - 1; i >= 0; i-- {
		if pipeStart[i] {
			return cmds[i]
		}
	}
	return nil
}

// ShellLine is a command's words as a shell line that runs them: a word
// that the shell would split or expand is single-quoted, and an empty
// word is shown as a pair of single quotes. A command of one word is a shell line already (svc runs it with
// sh -c) and is returned as it is.
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

// shellQuote quotes one word for the shell, only when it needs it.
func shellQuote(w string) string {
	if w == "" {
		return "''"
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
