/*
 * verify.c - the verify stage: did the keyphrases of the source survive, and
 * is what the output claims backed by the source?
 *
 * The output checked is lp_doc_result (answer, else summary, else the
 * working set). Three kinds of phrase are checked in it, case-insensitively
 * and regardless of spacing (text/match.h):
 *  - must: literal phrases the user requires;
 *  - regex: PCRE2 patterns that must match somewhere in the output (shown
 *    as the pattern); they are compiled at load time, so a bad one is a
 *    configuration error naming its offset;
 *  - auto: N phrases extracted from the source (text/keyphrase.h), skipping
 *    any that repeat a must phrase.
 *
 * passed = every must and regex phrase survived, the output has at least
 * min_words words, at least min_survival of the auto phrases survived
 * (a share, not all: they are a guess at what mattered, and a good summary
 * that paraphrases loses a few), and, with grounded: true, no sentence
 * whose numbers or identifiers are missing from the source is left in it.
 *
 * Grounding (text/ground.h): the output is cut into sentences; the numbers,
 * options, paths, identifiers and quoted strings of each are looked up in
 * the whole source (and in the question, which an answer may repeat), one
 * windowed pass over the mapped text whatever its length, pages released
 * behind it. A sentence with a token not found is ungrounded: on_ungrounded
 * remove (the default) takes it out of the output (unless that would leave
 * nothing), retry asks for a rerun like on_fail retry and removes what is
 * still ungrounded once the retries are spent, warn only reports it.
 *
 * The auto phrases are the document's topics (stages/topics.h): its
 * keyphrases weighed by how widely they spread through it, the ones a
 * summary of a few hundred words can keep, drawn from a bounded amount of
 * its prose whatever its length.
 *
 * on_fail: warn logs the failure and returns LP_OK; fail returns
 * LP_E_VERIFY (the run still writes its output: the CLI decides the exit
 * status). retry (needs a model) sets doc->must_keep to the missing
 * keyphrases with the source sentences that hold them, and asks the runner
 * (doc->rerun, api/runner.h) to run again from the last model summarize
 * stage before this one through this one; this stage then checks the new
 * output. After max_retries reruns it warns. The stage never runs another
 * stage itself. Whenever phrases are missing, each one's lost_level says at
 * which level of the summary tree it disappeared, and the trace gets an
 * event per phrase.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/mem.h"
#include "stages/model_stage.h"
#include "stages/plan.h"
#include "stages/stage.h"
#include "stages/summarize_model.h"
#include "stages/topics.h"
#include "stages/verify_ground.h"
#include "stages/verify_levels.h"
#include "text/keyphrase.h"
#include "text/match.h"

#define VERIFY_MIN_SURVIVAL 0.6

enum on_fail { ON_FAIL_WARN, ON_FAIL_FAIL, ON_FAIL_RETRY };

static const char *const on_fail_names[] = {"warn", "fail", "retry", NULL};

enum on_ungrounded { ON_UNGROUNDED_REMOVE, ON_UNGROUNDED_RETRY, ON_UNGROUNDED_WARN };

static const char *const on_ungrounded_names[] = {"remove", "retry", "warn", NULL};

struct verify_opts {
	long long n_auto;    /* phrases to extract from the source */
	long long n_level;   /* keyphrases of each summary's inputs to check in it
			      * (stages/verify_levels.h), 0: none */
	const char **must;   /* [n_must] */
	size_t n_must;
	const char **regex;  /* [n_regex] PCRE2 patterns, checked at load time */
	size_t n_regex;
	long long min_words;
	double min_survival; /* share of auto phrases that must survive */
	enum on_fail on_fail;
	long long max_retries; /* reruns asked for at most */
	int grounded;        /* check numbers and identifiers against the source */
	enum on_ungrounded on_ungrounded;
};

/* The node of item i of `key` in map, for positions in messages. */
static const struct lp_node *item_node(const struct lp_node *map, const char *key, size_t i)
{
	const struct lp_node *n = lp_node_get(map, key);

	if (n && n->kind == LP_NODE_SEQ && i < n->n)
		return n->values[i];
	return n ? n : map;
}

static enum lp_status check_phrases(struct lp_cfg_ctx *c, const struct lp_node *kp,
				    const struct verify_opts *o)
{
	char msg[256];
	size_t off;

	for (size_t i = 0; i < o->n_must; i++)
		if (!o->must[i][0] || !lp_match_count_words(o->must[i], strlen(o->must[i])))
			return lp_cfg_error(c, item_node(kp, "must", i),
					    "keyphrase '%s' has no words", o->must[i]);
	for (size_t i = 0; i < o->n_regex; i++)
		if (!lp_match_regex_valid(o->regex[i], msg, sizeof(msg), &off))
			return lp_cfg_error(c, item_node(kp, "regex", i),
					    "regex '%s': %s at offset %zu", o->regex[i], msg, off);
	return LP_OK;
}

static enum lp_status parse_keyphrases(struct lp_cfg_ctx *c, const struct lp_node *kp,
				       struct verify_opts *o)
{
	static const char *const keys[] = {"auto", "must", "regex", "levels", NULL};

	if (!kp)
		return LP_OK;
	if (lp_cfg_check_keys(c, kp, keys) ||
	    lp_cfg_get_int(c, kp, "auto", 0, 0, 1000, &o->n_auto) ||
	    lp_cfg_get_int(c, kp, "levels", 0, 0, 100, &o->n_level) ||
	    lp_cfg_get_string_list(c, kp, "must", &o->must, &o->n_must) ||
	    lp_cfg_get_string_list(c, kp, "regex", &o->regex, &o->n_regex))
		return LP_E_CONFIG;
	return check_phrases(c, kp, o);
}

/* max_retries, or its old name retries (not both). */
static enum lp_status parse_retries(struct lp_cfg_ctx *c, const struct lp_node *opts,
				    struct verify_opts *o)
{
	const struct lp_node *old = lp_node_get(opts, "retries");

	if (old && lp_node_get(opts, "max_retries"))
		return lp_cfg_error(c, old, "give max_retries or retries (its old name), not both");
	return lp_cfg_get_int(c, opts, old ? "retries" : "max_retries", 1, 0, 10,
			      &o->max_retries);
}

static enum lp_status parse(struct lp_cfg_ctx *c, const struct lp_node *opts,
			    const struct lp_pipeline *p, void **out)
{
	static const char *const keys[] = {"keyphrases", "min_words", "min_survival", "on_fail",
					   "max_retries", "retries", "grounded", "on_ungrounded",
					   NULL};
	struct verify_opts *o = lp_arena_alloc(c->arena, sizeof(*o));
	int f = ON_FAIL_WARN, u = ON_UNGROUNDED_REMOVE;

	if (!o)
		return lp_cfg_nomem(c);
	if (lp_cfg_check_keys(c, opts, keys) ||
	    parse_keyphrases(c, lp_node_get(opts, "keyphrases"), o) ||
	    lp_cfg_get_int(c, opts, "min_words", 0, 0, 100000000, &o->min_words) ||
	    lp_cfg_get_double(c, opts, "min_survival", VERIFY_MIN_SURVIVAL, 0.0, 1.0,
			      &o->min_survival) ||
	    lp_cfg_get_enum(c, opts, "on_fail", on_fail_names, ON_FAIL_WARN, &f) ||
	    parse_retries(c, opts, o) ||
	    lp_cfg_get_bool(c, opts, "grounded", 0, &o->grounded) ||
	    lp_cfg_get_enum(c, opts, "on_ungrounded", on_ungrounded_names,
			    ON_UNGROUNDED_REMOVE, &u))
		return LP_E_CONFIG;
	if (f == ON_FAIL_RETRY && !(p && p->model.present))
		return lp_cfg_error(c, lp_node_get(opts, "on_fail"),
				    "on_fail 'retry' needs a model: add a model section (or use "
				    "warn or fail)");
	if (u == ON_UNGROUNDED_RETRY && !(p && p->model.present))
		return lp_cfg_error(c, lp_node_get(opts, "on_ungrounded"),
				    "on_ungrounded 'retry' needs a model: add a model section (or "
				    "use remove or warn)");
	o->on_fail = (enum on_fail)f;
	o->on_ungrounded = (enum on_ungrounded)u;
	*out = o;
	return LP_OK;
}

static void add_quoted_list(struct lp_buf *out, const char *key, const char *const *v,
			    size_t n)
{
	lp_buf_addf(out, ", %s: [", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			lp_buf_adds(out, ", ");
		lp_cfg_quote(out, v[i]);
	}
	lp_buf_addc(out, ']');
}

static int retries_used(const struct verify_opts *o)
{
	return o->on_fail == ON_FAIL_RETRY ||
	       (o->grounded && o->on_ungrounded == ON_UNGROUNDED_RETRY);
}

static void describe(const void *opts, struct lp_buf *out)
{
	const struct verify_opts *o = opts;

	lp_buf_addf(out, "{keyphrases: {auto: %lld", o->n_auto);
	add_quoted_list(out, "must", o->must, o->n_must);
	add_quoted_list(out, "regex", o->regex, o->n_regex);
	if (o->n_level)
		lp_buf_addf(out, ", levels: %lld", o->n_level);
	lp_buf_addf(out, "}, min_words: %lld, min_survival: %g, on_fail: %s", o->min_words,
		    o->min_survival, on_fail_names[o->on_fail]);
	if (o->grounded)
		lp_buf_addf(out, ", grounded: true, on_ungrounded: %s",
			    on_ungrounded_names[o->on_ungrounded]);
	if (retries_used(o))
		lp_buf_addf(out, ", max_retries: %lld", o->max_retries);
	lp_buf_addc(out, '}');
}

struct checker {
	struct lp_doc *doc;
	struct lp_verify_result *r;
	struct lp_match m;
	const char *out;
	size_t out_len;
};

static enum lp_status add_literal(struct checker *k, const char *phrase, const char *origin,
				  struct lp_diag *d)
{
	struct lp_keyphrase *p = &k->r->phrases[k->r->n_phrases];

	/* the doc may outlive the pipeline whose options hold the phrase */
	p->text = lp_arena_strdup(&k->doc->arena, phrase);
	p->origin = origin;
	p->lost_level = -1;
	if (!p->text || lp_match_contains(&k->m, phrase, strlen(phrase), &p->survived))
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory matching keyphrases");
	k->r->n_phrases++;
	k->r->n_survived += p->survived != 0;
	return LP_OK;
}

static enum lp_status add_regex(struct checker *k, const char *pattern, struct lp_diag *d)
{
	struct lp_keyphrase *p = &k->r->phrases[k->r->n_phrases];
	struct lp_diag rd;
	enum lp_status st;

	lp_diag_init(&rd);
	p->text = lp_arena_strdup(&k->doc->arena, pattern);
	if (!p->text)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory matching keyphrases");
	p->origin = "regex";
	p->lost_level = -1;
	st = lp_match_regex_search(pattern, k->out, k->out_len, &p->survived, &rd);
	if (st == LP_E_NOMEM) {
		*d = rd;
		return st;
	}
	if (st) /* a match limit hit: count the pattern as missing, say why */
		lp_warn("verify: %s", rd.msg);
	k->r->n_phrases++;
	k->r->n_survived += p->survived != 0;
	return LP_OK;
}

/* Is `phrase` one of the must phrases (same normal form)? */
static int is_must(const struct verify_opts *o, const char *phrase, struct lp_buf *a,
		   struct lp_buf *b)
{
	lp_buf_reset(a);
	if (lp_match_normalize(phrase, strlen(phrase), a))
		return 0;
	for (size_t i = 0; i < o->n_must; i++) {
		lp_buf_reset(b);
		if (!lp_match_normalize(o->must[i], strlen(o->must[i]), b) && a->len == b->len &&
		    !memcmp(a->data, b->data, a->len))
			return 1;
	}
	return 0;
}

static enum lp_status add_auto(struct checker *k, const struct verify_opts *o,
			       struct lp_diag *d)
{
	const char **found = NULL;
	size_t n_found = 0, added = 0;
	struct lp_buf a, b;
	enum lp_status st;

	if (!o->n_auto)
		return LP_OK;
	st = lp_doc_topics(k->doc, (size_t)o->n_auto + o->n_must, &found, &n_found, d);
	lp_buf_init(&a);
	lp_buf_init(&b);
	for (size_t i = 0; i < n_found && added < (size_t)o->n_auto && !st; i++) {
		if (is_must(o, found[i], &a, &b))
			continue;
		st = add_literal(k, found[i], "auto", d);
		added++;
	}
	lp_buf_release(&a);
	lp_buf_release(&b);
	return st;
}

/* One line naming what failed, for the warning or the error. */
static const char *failure_text(struct lp_doc *doc, const struct lp_verify_result *r)
{
	struct lp_buf b;
	const char *s;
	size_t parts = 0;

	lp_buf_init(&b);
	lp_buf_adds(&b, "verification failed:");
	for (size_t i = 0; i < r->n_phrases; i++) {
		const struct lp_keyphrase *p = &r->phrases[i];
		if (p->survived || !strcmp(p->origin, "auto"))
			continue;
		lp_buf_addf(&b, "%s '%s'", parts++ ? "," : " missing", p->text);
	}
	if (r->words < r->min_words)
		lp_buf_addf(&b, "%s %zu words, fewer than min_words %zu", parts++ ? ";" : "",
			    r->words, r->min_words);
	if (r->auto_survival_rate + 1e-9 < r->min_survival)
		lp_buf_addf(&b, "%s %zu/%zu automatic keyphrases survived, fewer than min_survival "
			    "%g", parts++ ? ";" : "", r->n_auto_survived, r->n_auto, r->min_survival);
	if (r->level_failed >= 0) {
		const struct lp_verify_level *l = &r->levels[r->level_failed];
		lp_buf_addf(&b, "%s summary level %d kept %zu/%zu of its inputs' keyphrases, fewer "
			    "than min_survival %g", parts++ ? ";" : "", r->level_failed, l->survived,
			    l->phrases, r->min_survival);
	}
	if (r->n_ungrounded > r->n_removed)
		lp_buf_addf(&b, "%s %zu ungrounded sentence%s kept", parts++ ? ";" : "",
			    r->n_ungrounded - r->n_removed,
			    r->n_ungrounded - r->n_removed == 1 ? "" : "s");
	s = lp_arena_strndup(&doc->arena, b.data, b.len);
	lp_buf_release(&b);
	return s ? s : "verification failed";
}

static void set_note(struct lp_doc *doc, const char *kind, const char *note)
{
	struct lp_stage_trace *t = doc->n_trace ? &doc->trace[doc->n_trace - 1] : NULL;

	if (note && t && t->kind && !strcmp(t->kind, kind))
		t->note = note;
	lp_debug("%s: %s", kind, note ? note : "");
}

/* Do the phrases and the length pass (grounding aside)? */
static int phrases_pass(const struct lp_verify_result *r)
{
	if (r->words < r->min_words || r->auto_survival_rate + 1e-9 < r->min_survival)
		return 0;
	for (size_t i = 0; i < r->n_phrases; i++)
		if (!r->phrases[i].survived && strcmp(r->phrases[i].origin, "auto"))
			return 0;
	return 1;
}

static void finish(struct lp_verify_result *r, const struct verify_opts *o)
{
	r->n_auto = r->n_auto_survived = 0;
	for (size_t i = 0; i < r->n_phrases; i++) {
		if (strcmp(r->phrases[i].origin, "auto"))
			continue;
		r->n_auto++;
		r->n_auto_survived += r->phrases[i].survived != 0;
	}
	r->survival_rate = r->n_phrases ? (double)r->n_survived / (double)r->n_phrases : 1.0;
	r->auto_survival_rate = r->n_auto ? (double)r->n_auto_survived / (double)r->n_auto : 1.0;
	r->min_survival = o->min_survival;
	r->passed = phrases_pass(r) && r->n_ungrounded == r->n_removed;
	r->level_failed = -1;
	r->done = 1;
}

/* Check the output's phrases and length once into doc->verify (the
 * grounding fields and the retry count are kept). */
static enum lp_status check(struct lp_doc *doc, const struct verify_opts *o, struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify, keep = *r;
	struct checker k;
	size_t cap = o->n_must + o->n_regex + (size_t)o->n_auto;
	enum lp_status st = LP_OK;

	memset(r, 0, sizeof(*r));
	r->retries = keep.retries;
	r->grounded = keep.grounded;
	r->ground_tokens = keep.ground_tokens;
	r->ground_found = keep.ground_found;
	r->grounding_rate = keep.grounding_rate;
	r->ungrounded = keep.ungrounded;
	r->n_ungrounded = keep.n_ungrounded;
	r->n_removed = keep.n_removed;
	memset(&k, 0, sizeof(k));
	k.doc = doc;
	k.r = r;
	k.out = lp_doc_result(doc);
	r->phrases = lp_arena_alloc(&doc->arena, (cap + 1) * sizeof(*r->phrases));
	if (!k.out || !r->phrases)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for verification");
	k.out_len = strlen(k.out);
	if (lp_match_init(&k.m, k.out, k.out_len, d))
		return LP_E_NOMEM;
	for (size_t i = 0; i < o->n_must && !st; i++)
		st = add_literal(&k, o->must[i], "must", d);
	for (size_t i = 0; i < o->n_regex && !st; i++)
		st = add_regex(&k, o->regex[i], d);
	if (!st)
		st = add_auto(&k, o, d);
	lp_match_release(&k.m);
	if (st)
		return st;
	r->words = lp_match_count_words(k.out, k.out_len);
	r->min_words = (size_t)o->min_words;
	finish(r, o);
	return LP_OK;
}

/* Is the phrase in `text`? (Regexes by search, literals by match.) */
static int phrase_in(const struct lp_keyphrase *p, const char *text)
{
	struct lp_match m;
	struct lp_diag d;
	int found = 0;

	lp_diag_init(&d);
	if (!strcmp(p->origin, "regex")) {
		lp_match_regex_search(p->text, text, strlen(text), &found, &d);
		return found;
	}
	if (lp_match_init(&m, text, strlen(text), &d))
		return 1; /* out of memory: do not claim it was lost */
	if (lp_match_contains(&m, p->text, strlen(p->text), &found))
		found = 1;
	lp_match_release(&m);
	return found;
}

/* For each missing phrase: the lowest summary level that lost it; with
 * `events`, one trace event per phrase. */
static void find_losses(struct lp_doc *doc, int events)
{
	struct lp_verify_result *r = &doc->verify;

	for (size_t i = 0; i < r->n_phrases; i++) {
		struct lp_keyphrase *p = &r->phrases[i];
		if (p->survived)
			continue;
		for (size_t l = 0; l < doc->n_levels && p->lost_level < 0; l++) {
			int any = 0;
			for (size_t j = 0; j < doc->levels[l].n && !any; j++)
				any = doc->levels[l].texts[j] && phrase_in(p, doc->levels[l].texts[j]);
			if (!any)
				p->lost_level = (int)l;
		}
		if (!events)
			continue;
		if (p->lost_level >= 0)
			lp_doc_event(doc, "lost: '%s' (%s) at summary level %d", p->text, p->origin,
				     p->lost_level);
		else if (doc->n_levels)
			lp_doc_event(doc, "lost: '%s' (%s) after the summary", p->text, p->origin);
	}
}

/* The first place `phrase` occurs in text[0..len), ignoring ASCII case, or
 * NULL. The text is not NUL-terminated (a mapping), and each MiB scanned
 * is released from the resident set behind the scan. */
static const char *find_in_source(struct lp_doc *doc, const char *text, size_t len,
				  const char *phrase)
{
	size_t n = strlen(phrase), done = 0;
	int first = tolower((unsigned char)phrase[0]);

	for (size_t i = 0; n && i + n <= len; i++) {
		if (i - done >= LP_DOCUMENT_WINDOW) {
			lp_document_done(&doc->src, done, i - done);
			done = i;
		}
		if (tolower((unsigned char)text[i]) == first && !strncasecmp(text + i, phrase, n))
			return text + i;
	}
	return NULL;
}

/* The sentence of the source around the first place `phrase` occurs. */
static void add_source_sentence(struct lp_buf *b, struct lp_doc *doc, const char *phrase)
{
	const char *text = doc->src.text ? doc->src.text : doc->text, *hit, *a, *e;
	size_t len = doc->src.text ? doc->src.len : doc->len;

	if (!text || !(hit = find_in_source(doc, text, len, phrase)))
		return;
	for (a = hit; a > text && hit - a < 160 && a[-1] != '.' && a[-1] != '\n'; a--)
		;
	for (e = hit + strlen(phrase); e < text + len && e - hit < 200 && *e != '.' && *e != '\n'; e++)
		;
	while (a < hit && *a == ' ')
		a++;
	lp_buf_addf(b, " (source: \"%.*s%s\")", (int)(e - a), a, e < text + len && *e == '.' ? "." : "");
}

/* doc->must_keep from the phrases now missing and, when grounding asks for
 * the rerun too, the tokens the source does not hold. */
static enum lp_status set_must_keep(struct lp_doc *doc, int ungrounded, struct lp_diag *d)
{
	const struct lp_verify_result *r = &doc->verify;
	struct lp_buf b;
	size_t n = 0;

	lp_buf_init(&b);
	for (size_t i = 0; i < r->n_phrases && b.len < 2000; i++) {
		if (r->phrases[i].survived)
			continue;
		lp_buf_addf(&b, "- %s", r->phrases[i].text);
		if (strcmp(r->phrases[i].origin, "regex"))
			add_source_sentence(&b, doc, r->phrases[i].text);
		lp_buf_addc(&b, '\n');
	}
	for (size_t i = 0; ungrounded && i < r->n_ungrounded && b.len < 2400; i++) {
		for (size_t k = 0; k < r->ungrounded[i].n_tokens; k++)
			lp_buf_addf(&b, "%s'%s'", n++ ? ", " : "- only numbers and names the text "
				    "holds; it does not hold ", r->ungrounded[i].tokens[k]);
	}
	if (n)
		lp_buf_addc(&b, '\n');
	lp_document_done(&doc->src, 0, doc->len);
	doc->must_keep = b.len ? lp_arena_strndup(&doc->arena, b.data, b.len) : NULL;
	lp_buf_release(&b);
	if (b.len && !doc->must_keep)
		return lp_diag_set(d, LP_E_NOMEM, NULL, 0, 0, "out of memory for must-keep facts");
	return LP_OK;
}

/* Index of the stage whose options are `opts` in the doc's pipeline. */
static size_t own_index(const struct lp_doc *doc, const void *opts)
{
	const struct lp_pipeline *p = doc->pipeline;
	size_t i;

	for (i = 0; p && i < p->n_stages && p->stages[i].opts != opts; i++)
		;
	return p ? i : 0;
}

/*
 * Should the run go again, and from which stage? Only while retries are
 * left, when a retry is asked for what failed, and when there is a model
 * summary before this stage to redo (*from: its index).
 */
static int want_rerun(const struct lp_doc *doc, const struct verify_opts *o, size_t self,
		      int *ungrounded, size_t *from)
{
	const struct lp_verify_result *r = &doc->verify;
	int phrases = o->on_fail == ON_FAIL_RETRY && !phrases_pass(r);

	*ungrounded = o->grounded && o->on_ungrounded == ON_UNGROUNDED_RETRY && r->n_ungrounded;
	if (r->retries >= o->max_retries || !(phrases || *ungrounded))
		return 0;
	return lp_summarize_model_opts_of(doc, self, from) != NULL;
}

/* Ask the runner to run stages from..this one again, with must-keep facts. */
static enum lp_status ask_rerun(struct lp_doc *doc, size_t from, int ungrounded,
				struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify;
	size_t n_missing = r->n_phrases - r->n_survived;
	enum lp_status st;

	find_losses(doc, 1);
	if ((st = set_must_keep(doc, ungrounded, d)))
		return st;
	r->retries++;
	lp_doc_event(doc, "retry %d: rerun from stage %zu (summarize) keeping %zu missing "
		     "keyphrase%s%s", r->retries, from + 1, n_missing, n_missing == 1 ? "" : "s",
		     ungrounded ? ", leaving out ungrounded tokens" : "");
	set_note(doc, "verify", lp_arena_printf(&doc->arena, "%zu/%zu keyphrases survived, "
						"rerun %d asked", r->n_survived, r->n_phrases,
						r->retries));
	doc->rerun.requested = 1;
	doc->rerun.from = from;
	return LP_OK;
}

static const char *note_text(struct lp_doc *doc, const struct lp_verify_result *r)
{
	const char *retried = r->retries ? (r->retries == 1 ? " after a retry" : " after retries")
					 : "";

	if (!r->grounded)
		return lp_arena_printf(&doc->arena, "%zu/%zu keyphrases survived%s", r->n_survived,
				       r->n_phrases, retried);
	return lp_arena_printf(&doc->arena, "%zu/%zu keyphrases survived, %zu/%zu tokens "
			       "grounded, %zu sentence%s removed%s", r->n_survived, r->n_phrases,
			       r->ground_found, r->ground_tokens, r->n_removed,
			       r->n_removed == 1 ? "" : "s", retried);
}

/* Each level of the tree against its inputs (stages/verify_levels.h): an
 * event per level, and the lowest level under min_survival fails. */
static enum lp_status check_levels(struct lp_doc *doc, size_t n, struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify;
	enum lp_status st = lp_verify_levels(doc, n, d);

	for (size_t l = 0; !st && l < r->n_levels; l++) {
		const struct lp_verify_level *v = &r->levels[l];
		lp_doc_event(doc, "level %zu: kept %zu/%zu of its inputs' keyphrases", l, v->survived,
			     v->phrases);
		if (r->level_failed < 0 && v->phrases &&
		    (double)v->survived + 1e-9 < r->min_survival * (double)v->phrases) {
			r->level_failed = (int)l;
			r->passed = 0;
		}
	}
	return st;
}

static enum lp_status judge(struct lp_doc *doc, const struct verify_opts *o,
			    struct lp_verify_ground *g, size_t self, struct lp_diag *d)
{
	struct lp_verify_result *r = &doc->verify;
	enum lp_status st;
	size_t from;
	int ungrounded;

	if (o->grounded && (st = lp_verify_ground_check(doc, g, d)))
		return st;
	if ((st = check(doc, o, d)))
		return st;
	if (want_rerun(doc, o, self, &ungrounded, &from))
		return ask_rerun(doc, from, ungrounded, d);
	if (r->n_ungrounded && o->on_ungrounded != ON_UNGROUNDED_WARN && r->n_removed == 0) {
		if ((st = lp_verify_ground_remove(doc, g, d)))
			return st;
		for (size_t i = 0; i < r->n_ungrounded; i++) {
			const char *u = r->ungrounded[i].sentence;
			size_t n = strlen(u), cut = n > 60 ? 60 : n;
			while (cut < n && ((unsigned char)u[cut] & 0xC0) == 0x80)
				cut--; /* whole characters only */
			lp_doc_event(doc, "%s: \"%.*s%s\"", r->ungrounded[i].removed ?
				     "removed" : "ungrounded", (int)cut, u, cut < n ? "..." : "");
		}
		if (r->n_removed && (st = check(doc, o, d)))
			return st;
	}
	if (r->n_survived < r->n_phrases)
		find_losses(doc, o->on_fail == ON_FAIL_RETRY);
	if (o->n_level && (st = check_levels(doc, (size_t)o->n_level, d)))
		return st;
	set_note(doc, "verify", note_text(doc, r));
	if (r->passed)
		return LP_OK;
	if (o->on_fail == ON_FAIL_FAIL)
		return lp_diag_set(d, LP_E_VERIFY, NULL, 0, 0, "%s", failure_text(doc, r));
	lp_warn("%s", failure_text(doc, r));
	return LP_OK;
}

static enum lp_status run(struct lp_doc *doc, const void *opts, struct lp_diag *d)
{
	const struct verify_opts *o = opts;
	struct lp_verify_ground g;
	enum lp_status st;

	/* the facts of a rerun were for the stages before this one */
	doc->must_keep = NULL;
	if (!o->grounded) {
		struct lp_verify_result *r = &doc->verify;
		r->grounded = 0;
		r->ungrounded = NULL;
		r->n_ungrounded = r->n_removed = 0;
	}
	memset(&g, 0, sizeof(g));
	st = judge(doc, o, &g, own_index(doc, opts), d);
	lp_verify_ground_release(&g);
	return st;
}

/* Keyphrases extracted from the source (auto) take the most: candidate
 * tables over every word, 1 MiB and 7.5 bytes per byte (6.1 MB on
 * 878 KB); the check of the output alone (must, regex, grounded) reads
 * the source's tokens, 64 KiB and 2.5 bytes per byte (1.6 MB). */
static size_t plan(const void *opts, const struct lp_pipeline *p, size_t doc_len)
{
	const struct verify_opts *o = opts;

	(void)p;
	if (o->n_auto > 0)
		return lp_stage_plan_line((size_t)1 << 20, 15, 2, doc_len);
	return lp_stage_plan_line((size_t)64 << 10, 5, 2, doc_len);
}

const struct lp_stage_kind lp_stage_verify = {
	.name = "verify",
	.parse = parse,
	.run = run,
	.describe = describe,
	.plan = plan,
};
