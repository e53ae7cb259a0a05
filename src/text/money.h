/*
 * money.h - prices: a number with a currency beside it.
 *
 * A currency is a sign before the number ("$", "US$", "€", "£", "¥",
 * "￥"), a code before or after it ("USD", "EUR", "GBP", "JPY", "CNY",
 * "RMB", "CHF"), or a word after it ("dollars", "euros", "pounds",
 * "cents", "yuan", "元", "美元", "欧元", "日元", "英镑"), with at most one space
 * between ("$ 25", "25 EUR", "25元"). Codes and words are whole words, case
 * kept for codes. A bare "$" before a single digit is a shell's "$1", no
 * price. Nothing here allocates.
 */
#ifndef LP_TEXT_MONEY_H
#define LP_TEXT_MONEY_H

#include <stddef.h>

#include "text/sentence.h"

/* 1 when the number text[off, off + n) has a currency beside it, with the
 * price's bytes (the currency and the number) in *price; else 0. Reads
 * nothing outside text[0..len). */
int lp_money_price(const char *text, size_t len, size_t off, size_t n, struct lp_span *price);

/* 1 when text[0..len) names a currency anywhere (a sign, code or word as
 * above, a number beside it or not); else 0. */
int lp_money_named(const char *text, size_t len);

#endif
