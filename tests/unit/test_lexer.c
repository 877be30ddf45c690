/* test_lexer.c — the gir tokens (frontend/gir.l), driven directly through
 * the reentrant scanner: keywords and identifiers, %names as slices of the
 * source, numbers and quantities in base units, strings and escapes,
 * comments, line:col positions (tabs and UTF-8 count one column), and each
 * lexical error with its position. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "gir.tab.h"

int gir_lex_init_extra(GirParser *extra, void **scanner);
int gir_lex_destroy(void *scanner);

typedef struct Tok {
	int kind;
	GIRP_STYPE v;
	int line, col;
} Tok;

typedef struct Lexed {
	Tok t[256];
	int n;
	char *errs;                         /* diagnostics */
	int nerrors;
	GirParser st;
	Graph *g;
} Lexed;

/* Scans n bytes of text to the end (at most 256 tokens). */
static void lex_n(Lexed *x, const char *text, size_t len)
{
	memset(x, 0, sizeof *x);
	size_t elen = 0;
	FILE *f = open_memstream(&x->errs, &elen);
	Diag d;
	diag_init(&d, f, "t.gir", text, len);
	x->g = graph_new("t");
	GirParser *st = &x->st;
	st->g = x->g;
	st->d = &d;
	st->tmp = arena_new();
	st->names = arena_new();
	st->file = "t.gir";
	st->src = text;
	st->len = len;
	st->line = st->col = 1;
	st->at_bol = true;
	CU_ASSERT_EQUAL_FATAL(gir_lex_init_extra(st, &st->scanner), 0);
	for (;;) {
		Tok *t = &x->t[x->n];
		GIRP_LTYPE l;
		t->kind = gir_lex(&t->v, &l, st->scanner);
		t->line = l.first_line;
		t->col = l.first_column;
		if (t->kind == END || st->aborted || ++x->n == 256)
			break;
		st->ntok++;
	}
	gir_lex_destroy(st->scanner);
	fclose(f);
	x->nerrors = d.nerrors;
}

static void lex(Lexed *x, const char *text)
{
	lex_n(x, text, strlen(text));
}

static void done(Lexed *x)
{
	arena_free(x->st.tmp);
	arena_free(x->st.names);
	graph_free(x->g);
	free(x->errs);
}

static bool has(const Lexed *x, const char *msg)
{
	if (strstr(x->errs, msg))
		return true;
	fprintf(stderr, "\nwanted: %s\ngot: %s\n", msg, x->errs);
	return false;
}

static void test_words(void)
{
	Lexed x;
	lex(&x, "gir graph graphs cluster type machine network link true false"
		" Conv2D _a.b-c/d @device @x.y %n %0 %a/b.c-1:2 ^%z");
	int want[] = {KW_GIR, KW_GRAPH, IDENT, KW_CLUSTER, KW_TYPE, KW_MACHINE,
		      KW_NETWORK, KW_LINK, KW_TRUE, KW_FALSE, IDENT, IDENT,
		      ATKEY, ATKEY, VALNAME, VALNAME, VALNAME, ':', INT, '^',
		      VALNAME};
	int n = sizeof want / sizeof want[0];
	CU_ASSERT_EQUAL_FATAL(x.n, n);
	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(x.t[i].kind, want[i]);
	CU_ASSERT_STRING_EQUAL(x.t[2].v.str, "graphs");
	CU_ASSERT_STRING_EQUAL(x.t[11].v.str, "_a.b-c/d");
	CU_ASSERT_STRING_EQUAL(x.t[12].v.str, "@device");
	/* %names are slices of the source, without the '%' */
	CU_ASSERT_EQUAL(x.t[16].v.name.n, 7);
	CU_ASSERT_EQUAL(strncmp(x.t[16].v.name.s, "a/b.c-1", 7), 0);
	CU_ASSERT_EQUAL(x.t[18].v.i, 2);
	CU_ASSERT_EQUAL(x.t[20].v.name.n, 1);
	CU_ASSERT_EQUAL(x.nerrors, 0);
	done(&x);
}

static void test_numbers(void)
{
	Lexed x;
	lex(&x, "64 -1 +7 2.5e9 1e-05 .5 5. 12us 1.5ms 32GiB 16GB 100Gbps 12.5GB/s "
		"15.7TFLOPS 2E3 7e 9223372036854775807");
	CU_ASSERT_EQUAL_FATAL(x.n, 17);
	CU_ASSERT_EQUAL(x.t[0].kind, INT);
	CU_ASSERT_EQUAL(x.t[0].v.i, 64);
	CU_ASSERT_EQUAL(x.t[1].v.i, -1);
	CU_ASSERT_EQUAL(x.t[2].v.i, 7);
	CU_ASSERT_EQUAL(x.t[3].kind, FLOAT);
	CU_ASSERT_EQUAL(x.t[3].v.f, 2.5e9);
	CU_ASSERT_EQUAL(x.t[4].v.f, 1e-5);
	CU_ASSERT_EQUAL(x.t[5].v.f, 0.5);
	CU_ASSERT_EQUAL(x.t[6].kind, FLOAT);
	CU_ASSERT_EQUAL(x.t[6].v.f, 5.0);
	/* quantities are in base units: seconds, bytes, bytes/s, FLOP/s */
	CU_ASSERT_EQUAL(x.t[7].kind, QTY);
	CU_ASSERT_EQUAL(x.t[7].v.q.unit, UNIT_SECONDS);
	CU_ASSERT_DOUBLE_EQUAL(x.t[7].v.q.v, 12e-6, 1e-18);
	CU_ASSERT_DOUBLE_EQUAL(x.t[8].v.q.v, 1.5e-3, 1e-18);
	CU_ASSERT_EQUAL(x.t[9].v.q.unit, UNIT_BYTES);
	CU_ASSERT_EQUAL(x.t[9].v.q.v, 34359738368.0);
	CU_ASSERT_EQUAL(x.t[10].v.q.v, 16e9);
	CU_ASSERT_EQUAL(x.t[11].v.q.unit, UNIT_BYTE_RATE);
	CU_ASSERT_EQUAL(x.t[11].v.q.v, 12.5e9);         /* bits: / 8 */
	CU_ASSERT_EQUAL(x.t[12].v.q.v, 12.5e9);
	CU_ASSERT_EQUAL(x.t[13].v.q.unit, UNIT_FLOP_RATE);
	CU_ASSERT_EQUAL(x.t[13].v.q.v, 15.7e12);
	CU_ASSERT_EQUAL(x.t[14].kind, FLOAT);
	CU_ASSERT_EQUAL(x.t[14].v.f, 2000.0);
	/* "7e" is 7 with the unit "e", which does not exist */
	CU_ASSERT_EQUAL(x.t[15].kind, INT);
	CU_ASSERT_EQUAL(x.t[16].v.i, INT64_MAX);
	CU_ASSERT_EQUAL(x.nerrors, 1);
	CU_ASSERT_TRUE(has(&x, "t.gir:1:82: error: unknown unit 'e' in '7e'"));
	done(&x);

	lex(&x, "\n  99999999999999999999 1e999 1e300TB");
	CU_ASSERT_EQUAL(x.nerrors, 3);
	CU_ASSERT_TRUE(has(&x, "t.gir:2:3: error: integer '99999999999999999999' "
			       "is out of range"));
	CU_ASSERT_TRUE(has(&x, "t.gir:2:24: error: number '1e999' is out of "
			       "range"));
	CU_ASSERT_TRUE(has(&x, "t.gir:2:30: error: quantity '1e300TB' is out "
			       "of range"));
	/* a bad number is still a number: the parser sees no hole */
	CU_ASSERT_EQUAL(x.n, 3);
	CU_ASSERT_EQUAL(x.t[0].kind, INT);
	done(&x);
}

static void test_strings(void)
{
	Lexed x;
	lex(&x, "\"a\\\"b\\\\c\\nd\\te\" \"\" \"é\"");
	CU_ASSERT_EQUAL_FATAL(x.n, 3);
	CU_ASSERT_EQUAL(x.t[0].kind, STRING);
	CU_ASSERT_STRING_EQUAL(x.t[0].v.str, "a\"b\\c\nd\te");
	CU_ASSERT_STRING_EQUAL(x.t[1].v.str, "");
	CU_ASSERT_STRING_EQUAL(x.t[2].v.str, "é");
	CU_ASSERT_EQUAL(x.nerrors, 0);
	done(&x);

	/* an unknown escape is reported where it is, and kept */
	lex(&x, "x = \"ab\\qc\"");
	CU_ASSERT_EQUAL(x.nerrors, 1);
	CU_ASSERT_TRUE(has(&x, "t.gir:1:8: error: unknown escape '\\q'"));
	CU_ASSERT_STRING_EQUAL(x.t[2].v.str, "abqc");
	done(&x);

	/* unterminated: at the end of the line, and at a trailing backslash */
	lex(&x, "s = \"abc\nt = 1");
	CU_ASSERT_TRUE(has(&x, "t.gir:1:5: error: unterminated string"));
	CU_ASSERT_EQUAL(x.t[2].kind, STRING);
	CU_ASSERT_EQUAL(x.t[3].kind, IDENT);           /* the next line lexes */
	CU_ASSERT_EQUAL(x.t[3].line, 2);
	done(&x);
	lex(&x, "\"abc\\");
	CU_ASSERT_TRUE(has(&x, "t.gir:1:1: error: unterminated string"));
	done(&x);
}

static void test_positions(void)
{
	Lexed x;
	/* a tab is one column; so is each UTF-8 character */
	lex(&x, "# comment\n\tgraph \"éé\" {\n  %a");
	CU_ASSERT_EQUAL_FATAL(x.n, 4);
	CU_ASSERT_EQUAL(x.t[0].line, 2);
	CU_ASSERT_EQUAL(x.t[0].col, 2);
	CU_ASSERT_EQUAL(x.t[1].col, 8);
	CU_ASSERT_EQUAL(x.t[2].col, 13);
	CU_ASSERT_EQUAL(x.t[3].line, 3);
	CU_ASSERT_EQUAL(x.t[3].col, 3);
	/* header comments (before the first token) are kept, others not */
	CU_ASSERT_EQUAL_FATAL(x.st.ncomments, 1);
	CU_ASSERT_STRING_EQUAL(x.st.comments[0], " comment");
	done(&x);
	lex(&x, "gir # not a header comment\n1");
	CU_ASSERT_EQUAL(x.st.ncomments, 0);
	done(&x);
}

static void test_errors(void)
{
	Lexed x;
	lex(&x, "a $ b\n% c @ d\n\x01 é €");
	CU_ASSERT_TRUE(has(&x, "t.gir:1:3: error: invalid character '$'"));
	CU_ASSERT_TRUE(has(&x, "t.gir:2:1: error: expected a name after '%'"));
	CU_ASSERT_TRUE(has(&x, "t.gir:2:5: error: expected an annotation name "
			       "after '@'"));
	CU_ASSERT_TRUE(has(&x, "t.gir:3:1: error: invalid character '\\x01'"));
	CU_ASSERT_TRUE(has(&x, "t.gir:3:3: error: invalid character 'é'"));
	CU_ASSERT_TRUE(has(&x, "t.gir:3:5: error: invalid character '€'"));
	CU_ASSERT_EQUAL(x.nerrors, 6);
	/* the bad characters are skipped; the words around them remain */
	CU_ASSERT_EQUAL(x.n, 4);
	done(&x);

	/* a NUL byte inside the text is a bad character, not the end */
	lex_n(&x, "a\0b", 3);
	CU_ASSERT_EQUAL(x.n, 2);
	CU_ASSERT_TRUE(has(&x, "t.gir:1:2: error: invalid character '\\x00'"));
	done(&x);

	/* nesting deeper than GP_MAX_DEPTH stops the scan */
	char deep[GP_MAX_DEPTH + 8];
	memset(deep, '[', sizeof deep - 1);
	deep[sizeof deep - 1] = 0;
	lex(&x, deep);
	CU_ASSERT_EQUAL(x.n, GP_MAX_DEPTH);
	CU_ASSERT_TRUE(x.st.aborted);
	CU_ASSERT_TRUE(has(&x, "t.gir:1:65: error: nesting too deep (more than "
			       "64 levels)"));
	done(&x);
}

void suite_lexer(void)
{
	CU_pSuite s = CU_add_suite("lexer", NULL, NULL);
	CU_add_test(s, "keywords, identifiers, %names", test_words);
	CU_add_test(s, "numbers and quantities", test_numbers);
	CU_add_test(s, "strings and escapes", test_strings);
	CU_add_test(s, "line:col, comments", test_positions);
	CU_add_test(s, "lexical errors", test_errors);
}
