/*
 * request.h - a question that asks for the document's own words.
 *
 * "Quote the clause about termination.", "Show me the exact sentence
 * that says what --delete does", "引用关于专利的条款。" do not ask for an
 * answer in other words: they ask for a passage of the document, word
 * for word. The answer stage gives such a request the passage itself
 * (see `reply` in lpipe-pipeline(5)), and the request's instruction
 * words ("quote", "clause", "sentence") are not what to search for: only
 * its topic is ("termination", "what --delete does", "专利").
 *
 * English: [please] VERB [me|us] [the|a|an] [exact|verbatim|full|whole|
 * precise|actual|original] NOUN LINK TOPIC [verbatim|word for word|
 * exactly], VERB one of quote, cite, show, give, print, copy, reproduce,
 * find; NOUN one of clause, sentence, passage, paragraph, section, text,
 * part, wording, words, line, lines, statement, provision, definition,
 * rule, condition(s), term(s); LINK one of about, on, regarding,
 * concerning, covering, for, of, that, which, where, saying, describing,
 * defining, dealing with. Case aside. Chinese: [请] VERB [文档中|文中|原文中]
 * [关于|有关] TOPIC [的] NOUN, VERB one of 引用, 摘录, 摘抄, 抄录, 引述, 给出,
 * 找出, 列出, NOUN one of 条款, 句子, 那句话, 那段话, 段落, 原文, 规定, 内容,
 * 部分, 文字, 说明 (原文 may follow another NOUN).
 */
#ifndef LP_TEXT_REQUEST_H
#define LP_TEXT_REQUEST_H

#include "text/sentence.h"

/* 1 when the NUL-terminated q asks for a passage word for word (see
 * above), with the bytes of its topic in *topic; 0 otherwise. */
int lp_request_quote(const char *q, struct lp_span *topic);

#endif
