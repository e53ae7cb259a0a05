#include "retrieve/topk.h"

#include <math.h>

/* Whether index i ranks below index j. */
static int worse(const double *s, size_t i, size_t j)
{
	double a = s[i], b = s[j];

	if (isnan(a) || isnan(b))
		return isnan(a) && (!isnan(b) || i > j);
	return a < b || (a == b && i > j);
}

/* Restore the heap (worst at the root) below position `at`. */
static void sift_down(const double *s, size_t *h, size_t n, size_t at)
{
	for (;;) {
		size_t l = 2 * at + 1, r = l + 1, w = at;

		if (l < n && worse(s, h[l], h[w]))
			w = l;
		if (r < n && worse(s, h[r], h[w]))
			w = r;
		if (w == at)
			return;
		size_t t = h[at];
		h[at] = h[w];
		h[w] = t;
		at = w;
	}
}

size_t lp_topk_select(const double *scores, size_t n, size_t k, size_t *out)
{
	size_t m = k < n ? k : n;

	if (m == 0)
		return 0;
	for (size_t i = 0; i < m; i++)
		out[i] = i;
	for (size_t i = m / 2; i-- > 0;)
		sift_down(scores, out, m, i);
	for (size_t i = m; i < n; i++) {
		if (!worse(scores, out[0], i))
			continue;
		out[0] = i;
		sift_down(scores, out, m, 0);
	}
	/* Heap sort in place: move the worst to the end, one at a time. */
	for (size_t end = m; end > 1; end--) {
		size_t t = out[0];
		out[0] = out[end - 1];
		out[end - 1] = t;
		sift_down(scores, out, end - 1, 0);
	}
	return m;
}
