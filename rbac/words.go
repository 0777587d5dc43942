package rbac

import (
	"fmt"
	"strconv"
	"strings"
)

// ReasonWords says a decision's reason (Decision.Reason) as a person
// reads it: the rule in words ("The policy holds files.create calls by
// analysts for a person's approval when they have more than 50,000
// rows."), not its line in the policy. A reason it cannot read is given
// as it is.
func ReasonWords(reason string) string {
	if who, rest, ok := strings.Cut(reason, ": "); ok && strings.HasPrefix(who, "acting account ") {
		return "For the account acting for the user (" + strings.TrimPrefix(who, "acting account ") + "): " + ReasonWords(rest)
	}
	if action, rest, ok := strings.Cut(reason, " always needs approval (tool metadata); "); ok {
		return action + " always waits for a person's approval: the tool is set so. " + ReasonWords(rest)
	}
	line, ok := strings.CutPrefix(reason, "policy rule: ")
	if !ok {
		return reason
	}
	parts := strings.Split(line, ", ")
	if len(parts) < 4 {
		return reason
	}
	subject, action, cond, effect := parts[0], parts[1], strings.Join(parts[2:len(parts)-2], ", "), parts[len(parts)-2]
	if len(parts) == 4 {
		cond, effect = parts[2], parts[3]
	}
	verb := map[string]string{Allow: "lets %s run", Deny: "refuses %s", Approve: "holds %s for a person's approval"}[effect]
	if verb == "" {
		return reason
	}
	calls := action + " calls by " + subjectWords(subject)
	sentence := "The policy " + fmt.Sprintf(verb, calls)
	switch when, ok := conditionWords(cond); {
	case !ok:
		sentence += " when " + cond
	case when != "":
		sentence += " when " + when
	default:
		sentence += ", every one"
	}
	return sentence + "."
}

// subjectWords names a rule's subject: "analysts" for role:analyst,
// "ana" for user:ana.
func subjectWords(s string) string {
	if role, ok := strings.CutPrefix(s, "role:"); ok {
		return role + "s"
	}
	return strings.TrimPrefix(s, "user:")
}

// conditionWords says a rule's condition in words, "" for true; ok is
// false for one it cannot read.
func conditionWords(cond string) (string, bool) {
	cond = strings.TrimSpace(cond)
	if cond == "true" || cond == "" {
		return "", true
	}
	for _, join := range []string{" || ", " && "} {
		if strings.Contains(cond, join) {
			var words []string
			for _, part := range strings.Split(cond, join) {
				w, ok := conditionWords(part)
				if !ok || w == "" {
					return "", false
				}
				words = append(words, w)
			}
			return strings.Join(words, map[string]string{" || ": " or ", " && ": " and "}[join]), true
		}
	}
	return termWords(cond)
}

// attrWord says what a condition's attribute is of a call: a count
// (the verb and the things counted), a flag (what it says when true), or
// a text compared (its name).
type attrWord struct{ verb, things, flag, text string }

var attrWords = map[string]attrWord{
	"Rows":       {verb: "it has", things: "rows"},
	"Bytes":      {verb: "it moves", things: "bytes"},
	"Columns":    {verb: "it has", things: "columns"},
	"FileIDs":    {verb: "it names", things: "files"},
	"Limit":      {verb: "it asks for", things: "rows"},
	"Groups":     {verb: "it stores", things: "groups"},
	"Derived":    {flag: "its rows are filtered or grouped"},
	"Show":       {flag: "it stores its answer as a table"},
	"ActingFor":  {flag: "an account acts for the user"},
	"Format":     {text: "its format"},
	"TargetRole": {text: "the user's role"},
	"Risk":       {text: "its risk"},
	"Tool":       {text: "the tool"},
}

var comparisons = []struct{ op, words string }{
	{">=", "at least"}, {"<=", "at most"}, {"==", "exactly"}, {"!=", "other than"}, {">", "more than"}, {"<", "fewer than"},
}

// termWords says one comparison or flag: "it has more than 50,000
// rows", "its format is zip", "its rows are filtered or grouped".
func termWords(term string) (string, bool) {
	neg := strings.HasPrefix(term, "!") && !strings.HasPrefix(term, "!=")
	term = strings.TrimSpace(strings.TrimPrefix(term, "!"))
	for _, c := range comparisons {
		lhs, rhs, ok := strings.Cut(term, c.op)
		if !ok || neg {
			continue
		}
		attr, isAttr := strings.CutPrefix(strings.TrimSpace(lhs), "r.attrs.")
		w, known := attrWords[attr]
		if !isAttr || !known {
			return "", false
		}
		rhs = strings.TrimSpace(rhs)
		if text, quoted := strings.CutPrefix(rhs, "'"); quoted {
			is := map[string]string{"==": " is ", "!=": " is not "}[c.op]
			if is == "" || w.text == "" {
				return "", false
			}
			return w.text + is + strings.TrimSuffix(text, "'"), true
		}
		n, err := strconv.ParseInt(rhs, 10, 64)
		if err != nil || w.verb == "" {
			return "", false
		}
		return w.verb + " " + c.words + " " + thousands(n) + " " + w.things, true
	}
	w, known := attrWords[strings.TrimPrefix(term, "r.attrs.")]
	if !strings.HasPrefix(term, "r.attrs.") || !known || w.flag == "" {
		return "", false
	}
	if neg {
		return "not " + w.flag, true
	}
	return w.flag, true
}

// thousands writes n with its thousands separated: 50,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && r != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
