/* pbtxt.c — protobuf text format (what tf.io.write_graph(as_text=True)
 * writes) into a generic message tree, without a schema.
 *
 * Grammar (protobuf's text_format, minus extensions and Any):
 *   message := (field sep?)*            sep := ',' | ';'
 *   field   := NAME ':' value | NAME ':'? ('{' message '}' | '<' message '>')
 *            | NAME ':' '[' (elem (',' elem)*)? ']'
 *   value   := NUMBER | IDENT | '-' IDENT | STRING+   (adjacent strings join)
 *   elem    := value | '{' message '}' | '<' message '>'
 * The parser is a loop over an explicit stack of open messages capped at
 * PB_MAX_DEPTH, so input nesting never deepens the C stack.  It stops at
 * the first syntax error (FILE:LINE:COL and a caret). */
#include "tfimport.h"

#include <ctype.h>
#include <string.h>

typedef enum { T_EOF, T_NAME, T_NUM, T_STR, T_PUNCT, T_ERR } Tok;

typedef struct Lex {
	Arena *a;
	Diag *d;
	const char *file;
	const char *p, *end;
	uint32_t line;
	const char *bol;         /* start of the current line */
	/* current token */
	Tok tok;
	char punct;
	const char *text;
	size_t len;
	Loc loc;
} Lex;

static Loc here(Lex *lx, const char *p)
{
	return (Loc){lx->file, lx->line, (uint32_t)(p - lx->bol) + 1};
}

static void lerr(Lex *lx, Loc loc, const char *fmt, const char *arg)
{
	diag_error(lx->d, loc, fmt, arg);
	lx->tok = T_ERR;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Appends the UTF-8 encoding of cp. */
static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Scans a quoted string at lx->p (the quote); decodes escapes. */
static void lex_string(Lex *lx)
{
	char q = *lx->p;
	const char *s = lx->p + 1, *e = s;
	while (e < lx->end && *e != q && *e != '\n') {
		if (*e == '\\' && e + 1 < lx->end && e[1] != '\n')
			e++;
		e++;
	}
	if (e >= lx->end || *e != q) {
		lerr(lx, lx->loc, "unterminated string%s", "");
		return;
	}
	/* decoded text is never longer than the source (\u: 6 -> <= 3 bytes;
	 * \U: 10 -> <= 4) */
	char *o = arena_alloc(lx->a, (size_t)(e - s) + 1);
	size_t n = 0;
	for (const char *p = s; p < e;) {
		if (*p != '\\') {
			o[n++] = *p++;
			continue;
		}
		const char *esc = p++;
		char c = *p++;
		switch (c) {
		case 'n': o[n++] = '\n'; break;
		case 't': o[n++] = '\t'; break;
		case 'r': o[n++] = '\r'; break;
		case 'a': o[n++] = '\a'; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case 'v': o[n++] = '\v'; break;
		case '\\': case '\'': case '"': case '?': o[n++] = c; break;
		case 'x': case 'X': {
			int v = 0, k = 0;
			while (k < 2 && p < e && hexval(*p) >= 0)
				v = v * 16 + hexval(*p++), k++;
			if (!k) {
				lerr(lx, here(lx, esc), "bad \\x escape in string%s", "");
				return;
			}
			o[n++] = (char)v;
			break;
		}
		case 'u': case 'U': {
			int want = c == 'u' ? 4 : 8, k = 0;
			uint32_t v = 0;
			while (k < want && p < e && hexval(*p) >= 0)
				v = v * 16 + (uint32_t)hexval(*p++), k++;
			if (k != want || v > 0x10ffff) {
				lerr(lx, here(lx, esc), "bad \\%s escape in string",
				     c == 'u' ? "u" : "U");
				return;
			}
			n += put_utf8(o + n, v);
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;
				while (k < 3 && p < e && *p >= '0' && *p <= '7')
					v = v * 8 + (*p++ - '0'), k++;
				o[n++] = (char)v;
				break;
			}
			lerr(lx, here(lx, esc), "unknown escape in string%s", "");
			return;
		}
	}
	o[n] = 0;
	lx->tok = T_STR;
	lx->text = o;
	lx->len = n;
	lx->p = e + 1;
}

static bool namech(int c)
{
	return isalnum(c) || c == '_';
}

static void next(Lex *lx)
{
	for (;;) {
		while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' ||
					   *lx->p == '\r' || *lx->p == '\n' ||
					   *lx->p == '\f' || *lx->p == '\v')) {
			if (*lx->p == '\n') {
				lx->line++;
				lx->bol = lx->p + 1;
			}
			lx->p++;
		}
		if (lx->p < lx->end && *lx->p == '#') {
			while (lx->p < lx->end && *lx->p != '\n')
				lx->p++;
			continue;
		}
		break;
	}
	lx->loc = here(lx, lx->p);
	if (lx->p >= lx->end) {
		lx->tok = T_EOF;
		return;
	}
	unsigned char c = (unsigned char)*lx->p;
	const char *s = lx->p;
	if (c == '"' || c == '\'') {
		lex_string(lx);
		return;
	}
	if (isalpha(c) || c == '_') {
		while (lx->p < lx->end && namech((unsigned char)*lx->p))
			lx->p++;
		lx->tok = T_NAME;
		lx->text = arena_strndup(lx->a, s, (size_t)(lx->p - s));
		lx->len = (size_t)(lx->p - s);
		return;
	}
	if (isdigit(c) || c == '-' || c == '.' || c == '+') {
		const char *h = s + (c == '-' || c == '+');
		bool hex = h + 1 < lx->end && h[0] == '0' &&
			   (h[1] == 'x' || h[1] == 'X');
		const char *p = s + 1;
		while (p < lx->end) {
			unsigned char ch = (unsigned char)*p;
			if (namech(ch) || ch == '.' ||
			    ((ch == '-' || ch == '+') && !hex &&
			     (p[-1] == 'e' || p[-1] == 'E')))
				p++;
			else
				break;
		}
		lx->p = p;
		if (p == s + 1 && !isdigit(c)) {
			char buf[2] = {(char)c, 0};
			lerr(lx, lx->loc, "unexpected '%s'", buf);
			return;
		}
		lx->tok = T_NUM;
		lx->text = arena_strndup(lx->a, s, (size_t)(p - s));
		lx->len = (size_t)(p - s);
		return;
	}
	if (strchr(":{}<>[],;", c)) {
		lx->p++;
		lx->tok = T_PUNCT;
		lx->punct = (char)c;
		return;
	}
	char buf[2] = {(char)c, 0};
	if (isprint(c))
		lerr(lx, lx->loc, "unexpected character '%s'", buf);
	else
		lerr(lx, lx->loc, "unexpected byte in text format%s", "");
}

static bool is_p(const Lex *lx, char c)
{
	return lx->tok == T_PUNCT && lx->punct == c;
}

typedef struct Frame {
	PbField *field;          /* the message field being filled */
	PbField **tail;
	char closer;             /* '}' or '>' */
	bool in_list;            /* an element of name: [ ... ] */
	const char *name;        /* the list's field name */
} Frame;

static PbField *new_field(Lex *lx, const char *name, Loc loc)
{
	PbField *f = arena_alloc(lx->a, sizeof *f);
	f->name = name;
	f->loc = loc;
	return f;
}

/* A scalar value or string(s) at the current token into f; advances. */
static bool scalar(Lex *lx, PbField *f)
{
	if (lx->tok == T_STR) {
		f->kind = PB_STR;
		f->text = lx->text;
		f->len = lx->len;
		next(lx);
		while (lx->tok == T_STR) { /* "a" "b" is "ab" */
			char *j = arena_alloc(lx->a, f->len + lx->len + 1);
			memcpy(j, f->text, f->len);
			memcpy(j + f->len, lx->text, lx->len);
			f->len += lx->len;
			j[f->len] = 0;
			f->text = j;
			next(lx);
		}
		return lx->tok != T_ERR;
	}
	if (lx->tok == T_NUM || lx->tok == T_NAME) {
		f->kind = PB_SCALAR;
		f->text = lx->text;
		f->len = lx->len;
		next(lx);
		return lx->tok != T_ERR;
	}
	if (lx->tok != T_ERR)
		lerr(lx, lx->loc, "expected a value for field '%s'", f->name);
	return false;
}

/* What pb_parse does after a step: stop on an error, go on to the next
 * field, or go on with this one. */
typedef enum { STEP_ERR, STEP_NEXT, STEP_ON } Step;

/* An optional ',' or ';' after a field. */
static void skip_sep(Lex *lx)
{
	if (is_p(lx, ',') || is_p(lx, ';'))
		next(lx);
}

static void append(Frame *top, PbField *f)
{
	*top->tail = f;
	top->tail = &f->next;
}

/* At a '}' or '>': pops the message.  When it was an element of a list
 * that goes on after ',', STEP_ON with *cont the list's name. */
static Step close_message(Lex *lx, Frame *stack, int *sp, const char **cont)
{
	Frame *top = &stack[*sp];
	if (*sp == 0 || lx->punct != top->closer) {
		diag_error(lx->d, lx->loc, "unexpected '%c'", lx->punct);
		return STEP_ERR;
	}
	bool was_elem = top->in_list;
	const char *lname = top->name;
	(*sp)--;
	next(lx);
	if (!was_elem) {
		skip_sep(lx);
		return STEP_NEXT;
	}
	/* inside name: [ ..., {...} ...: continue the list */
	if (is_p(lx, ']')) {
		next(lx);
		skip_sep(lx);
		return STEP_NEXT;
	}
	if (!is_p(lx, ',')) {
		if (lx->tok != T_ERR)
			diag_error(lx->d, lx->loc,
				   "expected ',' or ']' in the list of '%s'",
				   lname);
		return STEP_ERR;
	}
	next(lx);
	*cont = lname; /* parse the list's next elements */
	return STEP_ON;
}

/* A field's name and what follows it: ':', ': [' (*list) or a message's
 * '{' or '<' (not consumed). */
static Step field_head(Lex *lx, const char **name, bool *list)
{
	if (lx->tok == T_PUNCT && lx->punct == '[') {
		diag_error(lx->d, lx->loc,
			   "extension and Any fields are not supported");
		return STEP_ERR;
	}
	if (lx->tok != T_NAME) {
		diag_error(lx->d, lx->loc, "expected a field name");
		return STEP_ERR;
	}
	*name = lx->text;
	next(lx);
	bool colon = false;
	if (is_p(lx, ':')) {
		colon = true;
		next(lx);
	}
	if (colon && is_p(lx, '[')) {
		next(lx);
		*list = true;
		if (is_p(lx, ']')) { /* empty list */
			next(lx);
			skip_sep(lx);
			return STEP_NEXT;
		}
	} else if (!colon && !is_p(lx, '{') && !is_p(lx, '<')) {
		if (lx->tok != T_ERR)
			diag_error(lx->d, lx->loc,
				   "expected ':' or '{' after field name '%s'",
				   *name);
		return STEP_ERR;
	}
	return STEP_ON;
}

/* A list's scalar elements, appended to top, until one is a message
 * (STEP_ON, at its '{' or '<') or ']' (STEP_NEXT). */
static Step list_scalars(Lex *lx, Frame *top, const char *name)
{
	for (;;) {
		if (lx->tok == T_ERR)
			return STEP_ERR;
		Loc eloc = lx->loc;
		if (is_p(lx, '{') || is_p(lx, '<'))
			return STEP_ON;
		PbField *f = new_field(lx, name, eloc);
		if (!scalar(lx, f))
			return STEP_ERR;
		append(top, f);
		if (is_p(lx, ',')) {
			next(lx);
			continue;
		}
		if (is_p(lx, ']')) {
			next(lx);
			skip_sep(lx);
			return STEP_NEXT;
		}
		if (lx->tok != T_ERR)
			diag_error(lx->d, lx->loc,
				   "expected ',' or ']' in the list of '%s'",
				   name);
		return STEP_ERR;
	}
}

bool pb_parse(Arena *a, const char *file, const char *src, size_t len,
	      Diag *d, PbField **out)
{
	Lex lx = {.a = a, .d = d, .file = file, .p = src, .end = src + len,
		  .line = 1, .bol = src};
	Frame stack[PB_MAX_DEPTH + 1];
	int sp = 0;
	PbField *root = NULL;
	stack[0] = (Frame){NULL, &root, 0, false, NULL};
	*out = NULL;
	next(&lx);
	for (;;) {
		Frame *top = &stack[sp];
		if (lx.tok == T_ERR)
			return false;
		if (lx.tok == T_EOF) {
			if (sp > 0) {
				diag_error(d, lx.loc,
					   "unexpected end of input: '%c' expected to close '%s' (line %u)",
					   top->closer, top->field->name,
					   top->field->loc.line);
				return false;
			}
			break;
		}
		const char *name = NULL;
		bool list = false;
		Loc floc = lx.loc;        /* the field name's */
		Step st;
		if (lx.tok == T_PUNCT && (lx.punct == '}' || lx.punct == '>')) {
			st = close_message(&lx, stack, &sp, &name);
			top = &stack[sp];
			list = true;
		} else {
			st = field_head(&lx, &name, &list);
		}
		if (st == STEP_ERR)
			return false;
		if (st == STEP_NEXT)
			continue;
		if (list) {
			/* elements until one is a message (pushed) or ']' */
			st = list_scalars(&lx, top, name);
			if (st == STEP_ERR)
				return false;
			if (st == STEP_NEXT)
				continue;
			floc = lx.loc;
		}
		if (is_p(&lx, '{') || is_p(&lx, '<')) {
			if (sp == PB_MAX_DEPTH) {
				diag_error(d, lx.loc,
					   "messages nested more than %d deep",
					   PB_MAX_DEPTH);
				return false;
			}
			PbField *f = new_field(&lx, name, floc);
			f->kind = PB_MSG;
			append(top, f);
			char closer = lx.punct == '{' ? '}' : '>';
			stack[++sp] = (Frame){f, &f->child, closer, list, name};
			next(&lx);
			continue;
		}
		PbField *f = new_field(&lx, name, floc);
		if (!scalar(&lx, f))
			return false;
		append(top, f);
		skip_sep(&lx);
	}
	*out = root;
	return true;
}
