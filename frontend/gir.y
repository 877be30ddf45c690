/* gir.y — the grammar of gir (shared/spec/gir.md, docs/gir.md).
 *
 * A pure, reentrant LALR(1) parser (jq's parser.y style): all state lives
 * in a GirParser that the caller owns; semantic values live in arenas or
 * are slices of the source text (%names), so error paths need no
 * destructors.  The actions only collect; parse.c builds the graph,
 * resolves each input as soon as its producer is known (the rest once the
 * whole file is read: forward references) and interprets the cluster
 * block.
 *
 * Error recovery is line based although newlines are white space: after a
 * syntax error inside the graph body (or the cluster block) the lexer
 * wrapper below hands the parser a SYNC token just before the first token
 * of the next line, and 'error SYNC' resumes there.  When the offending
 * token is itself the first of its line (a statement left open on the line
 * before), SYNC is inserted before it and the token is read again. */

%define api.pure full
%define api.prefix {girp_}
%define parse.error custom
%locations
%expect 0
%parse-param {GirParser *st}
%lex-param {GirParser *st}

%code requires {
#include "ir/ir.h"
typedef struct GirParser GirParser;
typedef struct AttrList AttrList;
typedef struct ValList ValList;
/* A %name as a slice of the source text (without the '%'). */
typedef struct GirName {
	const char *s;
	uint32_t n;
} GirName;
}

%union {
	const char *str;
	GirName name;
	int64_t i;
	double f;
	struct { double v; int unit; } q;
	Value *val;
	Type type;
	AttrList *al;
	ValList *vl;
	int flag;
}

%code provides {
/* One entry of an attribute list, with the locations of key and value. */
typedef struct AItem {
	const char *key;                    /* scratch copy, not interned */
	Value *val;
	Loc kloc, vloc;
} AItem;
struct AttrList {
	AItem *items;
	uint32_t n, cap;
};
struct ValList {
	Value **items;
	uint32_t n, cap;
};

/* A result name of the statement being parsed. */
typedef struct GirRes {
	GirName name;
	Loc loc;
} GirRes;

/* An input of the statement being parsed: resolved at once when its
 * producer came earlier in the file (in.src set), else a forward
 * reference, resolved when the whole graph has been read. */
typedef struct GirRef {
	Input in;
	GirName name;
	Op *op;                             /* forward refs: the consumer */
	uint32_t slot;                      /* and its input index */
	uint32_t line, col, idx;
	bool ctrl, has_idx, bad_idx;
} GirRef;

/* A token as the lexer wrapper saw it (for replay and messages). */
typedef struct GirTok {
	int kind;
	GIRP_STYPE val;
	GIRP_LTYPE loc;
	size_t off, len;                    /* text in the source */
	bool bol, replayed;
} GirTok;

/* A machine's type name, resolved at the end of the cluster block. */
typedef struct GirMType {
	int machine;
	const char *name;
	Loc loc;
} GirMType;

struct GirParser {
	Graph *g;
	Diag *d;
	Arena *tmp;                         /* token text, lists: reset often */
	Arena *names;                       /* header comments: kept to the end */
	const char *file;                   /* interned in g */
	const char *src;
	size_t len;
	void *scanner;

	/* lexer position (1-based line, column in characters) */
	uint32_t line, col;
	size_t off, tok_off;                /* of the next and the last token */
	size_t in_off;                      /* bytes handed to flex so far */
	bool at_bol;                        /* no token yet on this line */
	uint32_t ntok;                      /* tokens returned so far */
	int depth;                          /* bracket nesting */
	bool aborted;                       /* stop: nesting, too many errors */

	/* header comments (before the first token) */
	const char **comments;
	uint32_t ncomments, capcomments;

	/* error recovery (see the top of gir.y) */
	bool recover;
	int replay;                         /* 1: send SYNC, 2: send last */
	bool stashed;
	GirTok last, stash;
	GIRP_STYPE *lvalp;                  /* the parser's lookahead */
	GIRP_LTYPE *llocp;
	int end_line, end_col;              /* end of the last token */
	int syntax_errors;
	int err_line, err_col;              /* of the last syntax error */

	/* the statement being parsed */
	GirRes *res;
	uint32_t nres, capres;
	Type *outs;
	uint32_t nouts, capouts;
	int64_t *dims;
	uint32_t ndims, capdims;

	/* inputs of the statement being parsed */
	GirRef *refs;
	uint32_t nrefs, caprefs;
	/* forward references of the created ops, in op order */
	GirRef *fwd;
	size_t nfwd, capfwd;
	/* recently defined or used names (inputs mostly name ops defined a
	 * few lines before): a direct-mapped cache in front of the graph's
	 * name table, which a million-op graph no longer keeps in cache */
	struct GirRecent { Op *op; uint32_t idx, hash; } *recent;

	/* the cluster block */
	Cluster *c;
	int cerr0;
	bool net_given;
	GirMType *mtypes;
	uint32_t nmtypes, capmtypes;
};

#define GP_MAX_DEPTH 64
#define GP_RECENT 4096                      /* a power of two */

/* Lexer side (gir.l). */
int gir_lex(GIRP_STYPE *lval, GIRP_LTYPE *lloc, void *scanner);

/* Actions (parse.c). */
Loc gp_loc(GirParser *st, const GIRP_LTYPE *l);
void gp_version(GirParser *st, int64_t v, Loc loc);
void gp_res_begin(GirParser *st, GirName name, Loc loc);
void gp_res_add(GirParser *st, GirName name, Loc loc);
void gp_input(GirParser *st, GirName name, Loc loc, bool ctrl,
	      bool has_idx, int64_t idx, Loc idxloc);
void gp_dims_begin(GirParser *st);
void gp_dim(GirParser *st, int64_t v, Loc loc);
Type gp_type(GirParser *st, const char *dtype, Loc loc);
void gp_out(GirParser *st, Type t);
void gp_op(GirParser *st, const char *type, AttrList *al, bool types_given);
AttrList *gp_alist(GirParser *st);
void gp_alist_add(GirParser *st, AttrList *al, const char *key, Loc kloc,
		  Value *v, Loc vloc);
ValList *gp_vlist(GirParser *st);
void gp_vlist_add(GirParser *st, ValList *vl, Value *v);
Value *gp_list_value(GirParser *st, ValList *vl);
Value *gp_dict_value(GirParser *st, AttrList *al);
void gp_graph_name(GirParser *st, const char *name);
void gp_graph_attrs(GirParser *st, AttrList *al);
void gp_cluster_begin(GirParser *st, const char *name, Loc loc);
void gp_ctype(GirParser *st, const char *name, Loc loc, AttrList *al);
void gp_cmachine(GirParser *st, const char *name, Loc loc, AttrList *al);
void gp_cnetwork(GirParser *st, Loc loc, AttrList *al);
void gp_clink(GirParser *st, const char *a, const char *b, Loc loc,
	      AttrList *al);
void gp_cluster_end(GirParser *st);
bool gp_errok(GirParser *st);
}

%code {
#include <string.h>

#define LOC(l) gp_loc(st, &(l))

static int girp_lex(GIRP_STYPE *lval, GIRP_LTYPE *lloc, GirParser *st);
static void girp_error(GIRP_LTYPE *lloc, GirParser *st, const char *msg);
}

%token END 0 "end of file"
%token KW_GIR "'gir'" KW_GRAPH "'graph'" KW_CLUSTER "'cluster'"
%token KW_TYPE "'type'" KW_MACHINE "'machine'" KW_NETWORK "'network'"
%token KW_LINK "'link'" KW_TRUE "'true'" KW_FALSE "'false'"
%token <str> IDENT "identifier"
%token <str> ATKEY "annotation key"
%token <name> VALNAME "%name"
%token <str> STRING "string"
%token <i> INT "integer"
%token <f> FLOAT "number"
%token <q> QTY "quantity"
%token SYNC "end of line"

%type <str> word name key
%type <al> attrs attrs_opt alist
%type <val> value
%type <vl> vlist
%type <type> type
%type <flag> types_opt

%%

file:
	header cluster_opt graph
	;

header:
	KW_GIR INT                      { gp_version(st, $2, LOC(@2)); }
	;

cluster_opt:
	%empty
	| cluster
	;

cluster:
	KW_CLUSTER name '{'             { gp_cluster_begin(st, $2, LOC(@1)); }
	centries '}'                    { gp_cluster_end(st); }
	;

centries:
	%empty
	| centries centry
	| centries error SYNC           { if (!gp_errok(st)) YYABORT; yyerrok; }
	;

centry:
	KW_TYPE name attrs              { gp_ctype(st, $2, LOC(@2), $3); }
	| KW_MACHINE name attrs         { gp_cmachine(st, $2, LOC(@2), $3); }
	| KW_NETWORK attrs              { gp_cnetwork(st, LOC(@1), $2); }
	| KW_LINK name name attrs       { gp_clink(st, $2, $3, LOC(@2), $4); }
	;

graph:
	KW_GRAPH name '{'               { gp_graph_name(st, $2); }
	gtail
	;

/* 'graph NAME {' is followed by the graph's attributes or by its body. */
gtail:
	'}'
	| '}' '{' ops '}'
	| alist '}'                     { gp_graph_attrs(st, $1); }
	  '{' ops '}'
	| ops1 '}'
	;

ops:
	%empty
	| ops stmt
	;

ops1:
	stmt
	| ops1 stmt
	;

stmt:
	op
	| error SYNC                    { if (!gp_errok(st)) YYABORT; yyerrok; }
	;

op:
	results '=' word '(' inputs_opt ')' attrs_opt types_opt
	                                { gp_op(st, $3, $7, $8); }
	;

results:
	VALNAME                         { gp_res_begin(st, $1, LOC(@1)); }
	| results ',' VALNAME           { gp_res_add(st, $3, LOC(@3)); }
	;

inputs_opt:
	%empty
	| inputs
	;

inputs:
	input
	| inputs ',' input
	;

input:
	VALNAME                         { gp_input(st, $1, LOC(@1), false,
	                                           false, 0, LOC(@1)); }
	| VALNAME ':' INT               { gp_input(st, $1, LOC(@1), false,
	                                           true, $3, LOC(@3)); }
	| '^' VALNAME                   { gp_input(st, $2, LOC(@2), true,
	                                           false, 0, LOC(@2)); }
	;

attrs_opt:
	%empty                          { $$ = NULL; }
	| attrs
	;

types_opt:
	%empty                          { $$ = 0; }
	| ':' types                     { $$ = 1; }
	;

types:
	type                            { gp_out(st, $1); }
	| '(' ')'
	| '(' tlist ')'
	;

tlist:
	type                            { gp_out(st, $1); }
	| tlist ',' type                { gp_out(st, $3); }
	;

type:
	word '['                        { gp_dims_begin(st); }
	dims ']'                        { $$ = gp_type(st, $1, LOC(@1)); }
	;

dims:
	%empty
	| dlist
	;

dlist:
	dim
	| dlist ',' dim
	;

dim:
	INT                             { gp_dim(st, $1, LOC(@1)); }
	| '?'                           { gp_dim(st, DIM_UNKNOWN, LOC(@1)); }
	;

attrs:
	'{' '}'                         { $$ = gp_alist(st); }
	| '{' alist '}'                 { $$ = $2; }
	;

alist:
	key '=' value                   { $$ = gp_alist(st);
	                                  gp_alist_add(st, $$, $1, LOC(@1),
	                                               $3, LOC(@3)); }
	| alist ',' key '=' value       { $$ = $1;
	                                  gp_alist_add(st, $$, $3, LOC(@3),
	                                               $5, LOC(@5)); }
	;

key:
	word
	| ATKEY
	| STRING
	;

value:
	INT                             { $$ = val_int(st->g->arena, $1); }
	| FLOAT                         { $$ = val_float(st->g->arena, $1); }
	| QTY                           { $$ = val_qty(st->g->arena, $1.v,
	                                               (Unit)$1.unit); }
	| STRING                        { $$ = val_str(st->g->arena, $1); }
	| KW_TRUE                       { $$ = val_bool(st->g->arena, true); }
	| KW_FALSE                      { $$ = val_bool(st->g->arena, false); }
	| word                          { $$ = val_ident(st->g->arena, $1); }
	| type                          { $$ = val_type(st->g->arena, $1); }
	| '[' ']'                       { $$ = val_list(st->g->arena, 0); }
	| '[' vlist ']'                 { $$ = gp_list_value(st, $2); }
	| attrs                         { $$ = gp_dict_value(st, $1); }
	;

vlist:
	value                           { $$ = gp_vlist(st);
	                                  gp_vlist_add(st, $$, $1); }
	| vlist ',' value               { $$ = $1; gp_vlist_add(st, $$, $3); }
	;

name:
	word
	| STRING
	;

/* Keywords are ordinary words outside the places that need them. */
word:
	IDENT
	| KW_GIR                        { $$ = "gir"; }
	| KW_GRAPH                      { $$ = "graph"; }
	| KW_CLUSTER                    { $$ = "cluster"; }
	| KW_TYPE                       { $$ = "type"; }
	| KW_MACHINE                    { $$ = "machine"; }
	| KW_NETWORK                    { $$ = "network"; }
	| KW_LINK                       { $$ = "link"; }
	;

%%

static bool too_many(const GirParser *st)
{
	return st->d->max_errors && st->d->nerrors >= st->d->max_errors;
}

/* The scanner plus line-based resynchronisation (see the top).  On the
 * fast path only scalars are recorded; the value of the token that caused
 * an error is taken from the parser's lookahead (lvalp) when needed. */
static int girp_lex(GIRP_STYPE *lval, GIRP_LTYPE *lloc, GirParser *st)
{
	st->lvalp = lval;
	st->llocp = lloc;
	if (st->replay == 1) {
		st->replay = 2;
		*lloc = st->last.loc;
		return SYNC;
	}
	if (st->replay == 2) {
		st->replay = 0;
		st->last.replayed = true;
		*lval = st->last.val;
		*lloc = st->last.loc;
		return st->last.kind;
	}
	int k;
	bool bol;
	size_t off, len;
	if (st->stashed) {
		st->stashed = false;
		k = st->stash.kind;
		*lval = st->stash.val;
		*lloc = st->stash.loc;
		bol = st->stash.bol;
		off = st->stash.off;
		len = st->stash.len;
	} else {
		k = st->aborted ? END : gir_lex(lval, lloc, st->scanner);
		if (st->aborted || too_many(st)) {
			st->aborted = true;
			k = END;
		}
		bol = st->at_bol;
		st->at_bol = false;
		if (k == END) {
			/* at the end of the last token, where a caret shows */
			lloc->first_line = lloc->last_line = st->end_line;
			lloc->first_column = lloc->last_column = st->end_col;
			off = st->len;
			len = 0;
		} else {
			off = st->tok_off;
			len = st->off - st->tok_off;
		}
		if (st->recover && (bol || k == END)) {
			st->recover = false;
			st->stash = (GirTok){k, *lval, *lloc, off, len, bol, false};
			st->stashed = true;
			return SYNC;
		}
	}
	if (k != END) {
		st->ntok++;
		st->end_line = lloc->last_line;
		st->end_col = lloc->last_column;
	}
	st->last.kind = k;
	st->last.bol = bol;
	st->last.replayed = false;
	st->last.off = off;
	st->last.len = len;
	return k;
}

static void girp_error(GIRP_LTYPE *lloc, GirParser *st, const char *msg)
{
	diag_error(st->d, gp_loc(st, lloc), "%s", msg);
}

/* Describes the token that caused a syntax error. */
static void describe_token(FILE *f, GirParser *st, yysymbol_kind_t k)
{
	const GirTok *t = &st->last;
	if (k == YYSYMBOL_YYEOF) {
		fputs("end of file", f);
		return;
	}
	size_t n = t->len > 40 ? 40 : t->len;
	const char *s = st->src + t->off;
	const char *ell = t->len > n ? "..." : "";
	switch (k) {
	case YYSYMBOL_IDENT:
	case YYSYMBOL_INT:
	case YYSYMBOL_FLOAT:
	case YYSYMBOL_QTY:
	case YYSYMBOL_ATKEY:
		fprintf(f, "%s '%.*s%s'", yysymbol_name(k), (int)n, s, ell);
		break;
	case YYSYMBOL_STRING:
		fprintf(f, "string %.*s%s", (int)n, s, ell);
		break;
	default:
		fprintf(f, "'%.*s%s'", (int)n, s, ell);
	}
}

static bool is_keyword(yysymbol_kind_t k)
{
	return k == YYSYMBOL_KW_GIR || k == YYSYMBOL_KW_GRAPH ||
	       k == YYSYMBOL_KW_CLUSTER || k == YYSYMBOL_KW_TYPE ||
	       k == YYSYMBOL_KW_MACHINE || k == YYSYMBOL_KW_NETWORK ||
	       k == YYSYMBOL_KW_LINK;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, GirParser *st)
{
	yysymbol_kind_t la = yypcontext_token(ctx);
	const GIRP_LTYPE *loc = yypcontext_location(ctx);
	st->syntax_errors++;
	if (st->aborted)
		return 0;
	if (!st->last.replayed) {
		/* keep the lookahead, for replay */
		st->last.val = *st->lvalp;
		st->last.loc = *st->llocp;
	}
	/* resynchronise at the next line, or before this token if it
	 * starts a line (see girp_lex) */
	if (la != YYSYMBOL_YYEOF && st->last.bol && !st->last.replayed)
		st->replay = 1;
	else if (la != YYSYMBOL_YYEOF)
		st->recover = true;

	/* a replayed token that fails again was reported already */
	if (st->last.replayed && loc->first_line == st->err_line &&
	    loc->first_column == st->err_col)
		return 0;
	st->err_line = loc->first_line;
	st->err_col = loc->first_column;

	char *msg = NULL;
	size_t msglen = 0;
	FILE *f = open_memstream(&msg, &msglen);
	if (!f)
		pcc_die("out of memory");
	if (la == YYSYMBOL_YYEOF && st->ntok == 0) {
		fputs("empty input: expected 'gir 1'", f);
	} else {
		fputs("syntax error, unexpected ", f);
		describe_token(f, st, la);
		yysymbol_kind_t exp[YYNTOKENS], keep[YYNTOKENS];
		int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
		bool ident = false;
		for (int i = 0; i < n; i++)
			ident = ident || exp[i] == YYSYMBOL_IDENT;
		int m = 0;
		for (int i = 0; i < n; i++)
			if (!(ident && is_keyword(exp[i])) &&
			    exp[i] != YYSYMBOL_SYNC && exp[i] != YYSYMBOL_YYerror)
				keep[m++] = exp[i];
		if (m > 0 && m <= 5) {
			fputs(", expected ", f);
			for (int i = 0; i < m; i++) {
				if (i)
					fputs(i == m - 1 ? " or " : ", ", f);
				fputs(yysymbol_name(keep[i]), f);
			}
		}
	}
	fclose(f);
	diag_error(st->d, gp_loc(st, loc), "%s", msg);
	free(msg);
	return 0;
}
