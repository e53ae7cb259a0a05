/*
 * evidence.h - the sentences that answer a question, and checks that an
 * answer stands on them.
 *
 * A small model answers well from a few hundred tokens that hold the
 * answer and badly from two thousand that bury it, and it cannot be
 * trusted to quote or cite. These functions do that part of the job
 * without the model:
 *
 *  - lp_evidence_rank scores every sentence of the retrieved passages
 *    against the question, so the answer stage can give the model only
 *    the best ones (with the id of the passage each came from);
 *  - lp_evidence_quote_match decides whether a sentence the model says it
 *    quoted really occurs in a passage, allowing for small slips;
 *  - lp_evidence_support counts the answer's content words a passage
 *    holds, to check a citation or to find the passage to cite.
 *
 * Words are retrieval terms (terms.h): lower-case runs of letters and
 * digits, CJK text as overlapping character bigrams, so the same code
 * serves English and Chinese. Nothing here allocates except
 * lp_evidence_rank's result; term lists are capped (LP_EVIDENCE_MAX_TERMS)
 * and a longer text is judged on its first terms.
 */
#ifndef LP_TEXT_EVIDENCE_H
#define LP_TEXT_EVIDENCE_H

#include <stddef.h>

#include "core/status.h"
#include "text/sentence.h"

/* Terms of a quote, an answer or a question that the checks look at. */
#define LP_EVIDENCE_MAX_TERMS 128

/* A passage: the id to cite it by and its text. */
struct lp_evidence_src {
	size_t id;
	const char *text;
	size_t len;   /* bytes */
	double prior; /* added to the score of each of its sentences: how
		       * good the whole passage is (0: all alike) */
};

/* A sentence of srcs[src], bytes [off, off + len) of its text. */
struct lp_evidence_sent {
	size_t src;
	size_t off, len;
	double score;  /* its source's prior plus the idf of the question terms
			* it holds */
	double cover;  /* the share of the question terms' idf it holds, 0..1:
			* how much of what the question asks about it names
			* (each term alike under LP_EVIDENCE_COVER_UNITS) */
};

/* Units (chunks) of the corpus below which cover weighs every question
 * term alike: the idf of a term among a handful of chunks is noise. */
#define LP_EVIDENCE_COVER_UNITS 16

/*
 * Cut every source into sentences (sentence.h), a sentence that runs
 * across a table's rules ("|-----+-----|") into the rows between them (the
 * sentence splitter sees a whole table as one), and score each by the
 * distinct question terms it holds (English stop words skipped), each
 * weighted by its idf, plus a bonus for each of the question's phrases
 * (adjacent word pairs) it holds in order, plus its source's prior. The idf counts the units
 * of corpus[0..n_corpus) that hold the term (the document's chunks, so
 * that a word common in the document but rare in the few sources, such as
 * a Chinese bigram of function characters, weighs little); with corpus
 * NULL it counts the sentences of the sources. On success *out (n_out
 * sentences, every sentence of every source, lp_mem_free, tag scratch) is
 * sorted best first; ties keep the earlier source (passages given best
 * first break ties by retrieval rank), then, within a source, the shorter
 * sentence (it says less beside the match), then the earlier one.
 * Returns LP_OK or LP_E_NOMEM.
 */
enum lp_status lp_evidence_rank(const struct lp_evidence_src *srcs, size_t n,
				const struct lp_evidence_src *corpus, size_t n_corpus,
				const char *question, size_t qlen,
				struct lp_evidence_sent **out, size_t *n_out,
				struct lp_diag *d);

/*
 * How much of what the question asks beyond what given[0..n_given) name
 * (their ids and priors unused) text[0..len) holds: the cover (struct
 * lp_evidence_sent's) of the question terms none of the given holds, the
 * terms weighed over corpus[0..n_corpus) as lp_evidence_rank weighs them;
 * 1 when the given hold every term. With none given it is the sentence's
 * cover. Given a sentence's entry term ("-C, --directory=DIR"), it says
 * whether the sentence tells what the question asks of that entry.
 */
double lp_evidence_cover(const struct lp_evidence_src *corpus, size_t n_corpus,
			 const char *question, size_t qlen, const struct lp_evidence_src *given,
			 size_t n_given, const char *text, size_t len);

/* Sort sent[0..n) as lp_evidence_rank does (after a caller changed the
 * scores). */
void lp_evidence_sort(struct lp_evidence_sent *sent, size_t n);

/*
 * How well `quote` occurs in text[0..len): the largest share of the
 * quote's terms that a window of one or two consecutive sentences of the
 * text holds in the same order (longest common subsequence over terms), in
 * [0, 1]. *span (may be NULL) gets that window. 0 when the quote has no
 * terms. A verbatim quote scores 1; a dropped or changed word here and
 * there costs its share.
 */
double lp_evidence_quote_match(const char *quote, size_t qlen, const char *text, size_t len,
			       struct lp_span *span);

/*
 * How many of the answer's content terms text[0..len) holds. Content terms
 * are the distinct terms of the answer that are not stop words and not
 * terms of the question (the question's own words say nothing about where
 * the answer is), unless that leaves none, when the question's are kept.
 * *n_terms (may be NULL) gets their number. (text/words.h says how this
 * differs from the support a summary point is judged by.)
 */
size_t lp_evidence_support(const char *answer, size_t alen, const char *question,
			   size_t qlen, const char *text, size_t len, size_t *n_terms);

/*
 * 1 when the answer says nothing the question does not: it has content
 * terms (stop words aside) and every one of them, an English word by its
 * stem (text/stem.h), is a term of the question ("The line
 * /etc/resolv.conf contains the DNS server at 192.168.11.1." for "If the
 * DNS server is at 192.168.11.1, which line does /etc/resolv.conf
 * contain?"); else 0.
 */
int lp_evidence_echoes(const char *answer, size_t alen, const char *question, size_t qlen);

#endif
